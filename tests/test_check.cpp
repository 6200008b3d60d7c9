// foxeval check on every result kind: a changed score, a missing and an extra metric, arrays,
// tolerances by pattern, and settings that differ (locations such as the model directory do not count).
#include <doctest/doctest.h>

#include "data/json_file.h"
#include "tasks/results/check.h"
#include "tests/temp_files.h"

namespace foxeval {
namespace {

nlohmann::json lm_eval_result() {
  return {{"results", {{"piqa", {{"alias", "piqa"}, {"acc,none", 0.625}, {"acc_stderr,none", 0.0125}}},
                       {"wikitext", {{"alias", "wikitext"}, {"word_perplexity,none", 1234.5}}}}},
          {"n-samples", {{"piqa", {{"original", 1838}, {"effective", 8}}}}},
          {"header", {{"task", "lm-eval"}, {"elapsed_s", 3.0}, {"settings", {{"model", "/a/b"}, {"max_length", 16384}}}}}};
}

CheckReport check(const nlohmann::json& now, const nlohmann::json& base, CheckOptions opt = {}) {
  test::TempDir dir("check");
  write_json_atomic((dir.path / "now.json").string(), now);
  write_json_atomic((dir.path / "base.json").string(), base);
  return check_against_baseline((dir.path / "now.json").string(), (dir.path / "base.json").string(), opt);
}

const CheckRow* row_of(const CheckReport& r, const std::string& metric) {
  for (const auto& row : r.rows)
    if (row.metric == metric) return &row;
  return nullptr;
}

}  // namespace

TEST_CASE("check: metrics are the numeric leaves outside the header; identical results pass") {
  const auto metrics = result_metrics(lm_eval_result());
  CHECK(metrics.size() == 5);  // acc, stderr, word_perplexity, original, effective
  CheckReport same = check(lm_eval_result(), lm_eval_result());
  for (const auto& r : same.rows) CHECK(r.ok);
  CHECK(same.settings_differ.empty());
}

TEST_CASE("check: a moved score, a missing metric and an extra metric fail; tolerances by default and by pattern") {
  nlohmann::json now = lm_eval_result();
  now["results"]["piqa"]["acc,none"] = 0.63;
  now["results"]["wikitext"]["word_perplexity,none"] = 1234.5 * (1 + 5e-6);  // within 1e-5 relative
  now["results"]["wikitext"].erase("alias");
  now["results"]["boolq"] = {{"acc,none", 0.5}};
  now["n-samples"].erase("piqa");
  CheckReport r = check(now, lm_eval_result());
  REQUIRE(row_of(r, "results/piqa/acc,none"));
  CHECK(!row_of(r, "results/piqa/acc,none")->ok);
  CHECK(row_of(r, "results/wikitext/word_perplexity,none")->ok);
  CHECK(row_of(r, "n-samples/piqa/original")->problem == "missing");
  CHECK(row_of(r, "results/boolq/acc,none")->problem == "extra");
  CHECK(!row_of(r, "results/boolq/acc,none")->ok);

  CheckOptions loose;
  loose.tolerances = {{"results/*/acc,none", 0.01}};
  CHECK(check(now, lm_eval_result(), loose).rows.size() == r.rows.size());
  CHECK(row_of(check(now, lm_eval_result(), loose), "results/piqa/acc,none")->ok);
}

TEST_CASE("check: arrays compare element-wise and report the worst element") {
  nlohmann::json base = {{"val/loss_per_token", {1.0, 2.0, 3.0}}, {"kind", "foxeval-loss"}};
  nlohmann::json now = base;
  now["val/loss_per_token"][1] = 2.5;
  CheckReport r = check(now, base);
  CHECK(!r.rows.at(0).ok);
  CHECK(r.rows.at(0).baseline == 2.0);
  CHECK(r.rows.at(0).result == 2.5);
  now["val/loss_per_token"][1] = 2.00005;  // within the loss default 1e-4
  CHECK(check(now, base).rows.at(0).ok);
}

TEST_CASE("check: settings that change numbers differ -> reported; where the model lives does not count") {
  nlohmann::json moved = lm_eval_result();
  moved["header"]["settings"]["model"] = "/elsewhere/b";
  CHECK(check(moved, lm_eval_result()).settings_differ.empty());
  nlohmann::json other = lm_eval_result();
  other["header"]["settings"]["max_length"] = 2048;
  const CheckReport r = check(other, lm_eval_result());
  REQUIRE(r.settings_differ.size() == 1);
  CHECK(r.settings_differ[0] == "max_length: 16384 vs 2048");
}

}  // namespace foxeval
