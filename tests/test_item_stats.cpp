// Per-item statistics (tasks/results/item_stats.h) against lm-eval 0.4.4's own functions and a Python
// rendition of the paired comparison (tests/tools/make_stderr_goldens.py ->
// tests/fixtures/stats/stderr_golden.json), and Python's random.Random it draws with.
#include <doctest/doctest.h>

#include <cmath>

#include "data/json_file.h"
#include "data/python/python_random.h"
#include "tasks/results/item_stats.h"

namespace foxeval {
namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = read_json("tests/fixtures/stats/stderr_golden.json");
  return g;
}

std::vector<double> numbers(const nlohmann::json& a) { return a.get<std::vector<double>>(); }

ItemScores items(const nlohmann::json& values, const std::string& aggregation, const nlohmann::json* weights = nullptr) {
  ItemScores s;
  s.values = numbers(values);
  for (size_t i = 0; i < s.values.size(); ++i) s.ids.push_back(std::to_string(i));
  if (weights) s.weights = numbers(*weights);
  s.aggregation = aggregation;
  return s;
}

TEST_CASE("PythonRandom's random() and choices, as the bootstrap draws them, are CPython's") {
  // python3 -c "import random; r = random.Random(42); print(repr(r.random()), r.choices(range(7), k=5))"
  PythonRandom r(42);
  CHECK(r.random() == 0.6394267984578837);
  PythonRandom s(0);
  s.random();
  s.random();
  std::vector<size_t> picks;
  for (int k = 0; k < 5; ++k) picks.push_back(s.choices_index(7));
  CHECK(picks == std::vector<size_t>{2, 1, 3, 2, 5});
  PythonRandom big(5000000000ULL);  // two 32-bit key words
  CHECK(big.random() == 0.08666010167354754);
}

TEST_CASE("stderr equals lm-eval 0.4.4's mean_stderr and bootstrap_stderr to the bit") {
  for (const nlohmann::json& c : golden().at("lm_eval")) {
    CAPTURE(c.at("name").get<std::string>());
    const nlohmann::json* w = c.contains("weights") ? &c["weights"] : nullptr;
    const ItemScores s = items(c.at("values"), c.at("aggregation"), w);
    CHECK(aggregate_items(s.aggregation, s.values, s.weights) == c.at("value").get<double>());
    const nlohmann::json e = per_item_entry(s);
    CHECK(e.at("stderr").get<double>() == c.at("stderr").get<double>());
    CHECK(e.at("n").get<size_t>() == s.values.size());
    CHECK(e.at("stderr_method") == (s.aggregation == "mean" ? "mean_stderr" : "bootstrap"));
  }
}

TEST_CASE("one item has no stderr, as lm-eval") {
  ItemScores s;
  s.ids = {"a"};
  s.values = {1.0};
  const nlohmann::json e = per_item_entry(s);
  CHECK(e.at("stderr") == "N/A");
  CHECK(e.at("n") == 1);
}

TEST_CASE("paired comparison equals its Python rendition: difference, 95% interval, McNemar") {
  for (const nlohmann::json& c : golden().at("paired")) {
    CAPTURE(c.at("name").get<std::string>());
    if (!c.contains("values_a")) {
      CHECK(mcnemar_exact_p(c.at("a_only"), c.at("b_only")) ==
            doctest::Approx(c.at("mcnemar_p").get<double>()).epsilon(1e-12));
      continue;
    }
    const nlohmann::json* w = c.contains("weights") ? &c["weights"] : nullptr;
    const ItemScores a = items(c.at("values_a"), c.at("aggregation"), w),
                     b = items(c.at("values_b"), c.at("aggregation"), w);
    const PairedDifference d = paired_difference(a, b, c.at("seed").get<uint64_t>(), c.at("resamples").get<int64_t>());
    CHECK(d.a == c.at("a").get<double>());
    CHECK(d.b == c.at("b").get<double>());
    CHECK(d.difference == c.at("difference").get<double>());
    CHECK(d.low == c.at("low").get<double>());
    CHECK(d.high == c.at("high").get<double>());
    if (c.contains("mcnemar_p")) {
      REQUIRE(d.binary);
      CHECK(d.a_only == c.at("a_only").get<int64_t>());
      CHECK(d.b_only == c.at("b_only").get<int64_t>());
      CHECK(d.mcnemar_p == doctest::Approx(c.at("mcnemar_p").get<double>()).epsilon(1e-12));
    }
  }
}

TEST_CASE("paired comparison on constructed pairs with a known answer") {
  ItemScores a, b;
  for (int i = 0; i < 40; ++i) {
    a.ids.push_back(std::to_string(i));
    a.values.push_back(i % 7);
    b.values.push_back(i % 7 + 2.5);  // every item 2.5 better: every resample differs by 2.5
  }
  b.ids = a.ids;
  PairedDifference d = paired_difference(a, b);
  CHECK(d.difference == doctest::Approx(2.5).epsilon(1e-14));  // two means' rounding apart
  CHECK(d.low == doctest::Approx(2.5).epsilon(1e-14));
  CHECK(d.high == doctest::Approx(2.5).epsilon(1e-14));
  CHECK_FALSE(d.binary);
  d = paired_difference(a, a);  // a result against itself: no difference, an interval of one point
  CHECK(d.difference == 0);
  CHECK(d.low == 0);
  CHECK(d.high == 0);
  ItemScores x, y;  // accuracies: y right on 12 items x misses, wrong on 2 x gets
  for (int i = 0; i < 50; ++i) {
    x.ids.push_back(std::to_string(i));
    x.values.push_back(i < 2 ? 1.0 : i < 14 ? 0.0 : (i % 2));
    y.values.push_back(i < 2 ? 0.0 : i < 14 ? 1.0 : (i % 2));
  }
  y.ids = x.ids;
  d = paired_difference(x, y);
  REQUIRE(d.binary);
  CHECK(d.a_only == 2);
  CHECK(d.b_only == 12);
  CHECK(d.difference == doctest::Approx(10.0 / 50));
  CHECK(d.low > 0);  // 12 against 2 discordant pairs: the interval excludes 0
  CHECK(d.mcnemar_p == doctest::Approx(2 * (1 + 14 + 91) / 16384.0));  // 2 * P(Bin(14, 1/2) <= 2)
  CHECK_THROWS(paired_difference(x, a));  // 50 items against 40
}

}  // namespace
}  // namespace foxeval
