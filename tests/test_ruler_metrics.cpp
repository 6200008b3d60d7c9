// RULER's scores (tasks/ruler/ruler_metrics.h) against lm-eval 0.4.13's common_utils functions:
// tests/fixtures/ruler/metric_goldens.json (tests/tools/ruler_metric_goldens.py) holds 3000 generated
// predictions with their expected outputs, cleaned text and both scores, and 300 score lists with
// aggregate_metrics of each.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "data/json_file.h"
#include "tasks/ruler/ruler_metrics.h"

using nlohmann::json;
namespace ruler = foxeval::ruler;

TEST_CASE("ruler metrics: postprocess_pred, string_match_all/part and aggregate_metrics equal lm-eval's") {
  const json g = foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/ruler/metric_goldens.json");
  size_t found_some = 0, found_none = 0;
  for (const json& c : g["cases"]) {
    CAPTURE(c.dump());
    const std::string pred = c["prediction"];
    const std::vector<std::string> outputs = c["outputs"];
    REQUIRE(ruler::postprocess_pred(pred) == c["clean"].get<std::string>());
    REQUIRE(ruler::string_match_all(pred, outputs) == c["all"].get<double>());
    REQUIRE(ruler::string_match_part(pred, outputs) == c["part"].get<double>());
    (c["all"].get<double>() > 0 ? found_some : found_none) += 1;
  }
  CHECK(found_some > 1000);
  CHECK(found_none > 500);
  for (const json& a : g["aggregates"]) {
    CAPTURE(a.dump());
    REQUIRE(ruler::aggregate_metrics(a["values"].get<std::vector<double>>()) == a["mean"].get<double>());
  }
  // Case-insensitive by Python's str.lower() (final sigma included), beyond ASCII.
  CHECK(ruler::string_match_all("  ÜNÏCODE and ΣΑΣ\x01", {"ünïcode", "σας", "absent"}) == 2.0 / 3.0);
  CHECK(ruler::postprocess_pred(" \ta\x01" "b\x1f ") == "a\nb");
}
