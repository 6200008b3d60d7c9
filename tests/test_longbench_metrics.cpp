// LongBench scorer against the official Python: tests/fixtures/longbench/metrics_golden.json holds
// metrics.py's values and eval.py's scores on hard cases (multi-line, punctuation, accents, Greek
// final sigma, CJK, code with comments, lines over 200 characters, empty texts, rouge's recursion
// limit), made by tests/tools/longbench_metrics_golden.py with rouge, fuzzywuzzy (difflib) and numpy.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/item_stats.h"
#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/metrics.h"
#include "data/python/numbers.h"
#include "tasks/longbench/sequence_matcher.h"
#include "data/python/unicode.h"

using nlohmann::json;
namespace lb = foxeval::longbench;

namespace {

const json& golden() {
  static const json g = foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/longbench/metrics_golden.json");
  return g;
}

std::vector<std::string> strings(const json& j) { return j.get<std::vector<std::string>>(); }
std::vector<std::vector<std::string>> string_lists(const json& j) { return j.get<std::vector<std::vector<std::string>>>(); }

// A golden number: a float, or "NaN" where Python's value was nan.
double number(const json& j) { return j.is_string() ? std::nan("") : j.get<double>(); }

bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

TEST_CASE("longbench metric: every metrics.py value equals the official Python") {
  const json& cases = golden().at("metric");
  REQUIRE(cases.size() > 1000);
  int errors = 0;
  for (const json& c : cases) {
    const std::string ds = c.at("dataset");
    INFO(ds << " prediction=" << json(c.at("prediction")).dump() << " answer=" << json(c.at("answer")).dump());
    if (c.contains("error")) {
      CHECK_THROWS_AS(lb::metric(ds, c.at("prediction"), c.at("answer"), strings(c.at("all_classes"))), foxeval::Error);
      ++errors;
      continue;
    }
    const double got = lb::metric(ds, c.at("prediction"), c.at("answer"), strings(c.at("all_classes")));
    CHECK(std::fabs(got - c.at("value").get<double>()) <= 1e-12);
  }
  CHECK(errors >= 2);
}

TEST_CASE("longbench metric: normalize_answer tokens equal Python's") {
  for (const json& c : golden().at("normalize")) {
    INFO(json(c.at("text")).dump());
    CHECK(lb::normalize_answer_tokens(c.at("text")) == strings(c.at("tokens")));
  }
}

TEST_CASE("longbench metric: fuzz.ratio and SequenceMatcher matches equal difflib's") {
  for (const json& c : golden().at("fuzz_ratio")) {
    const std::string a = c.at("a"), b = c.at("b");
    INFO(json(a).dump() << " vs " << json(b).dump());
    CHECK(lb::fuzz_ratio(a, b) == c.at("value").get<int>());
    CHECK(lb::sequence_matcher_matches(foxeval::utf8_to_u32(a, "a"), foxeval::utf8_to_u32(b, "b")) == c.at("matches").get<int64_t>());
  }
}

TEST_CASE("longbench metric: eval.py's scorer and scorer_e give the same numbers") {
  const json& sets = golden().at("sets");
  REQUIRE(sets.size() >= 40);
  int empty_buckets = 0;
  for (const json& s : sets) {
    const std::string ds = s.at("dataset");
    INFO(ds << " with " << s.at("predictions").size() << " records");
    const auto predictions = strings(s.at("predictions"));
    const auto answers = string_lists(s.at("answers"));
    const auto classes = string_lists(s.at("all_classes"));
    CHECK(lb::score_dataset(ds, predictions, answers, classes) == s.at("score").get<double>());
    const json e = lb::score_dataset_e(ds, predictions, answers, classes, s.at("lengths").get<std::vector<int64_t>>());
    REQUIRE(e.size() == 3);
    for (const char* bucket : {"0-4k", "4-8k", "8k+"}) {
      INFO(bucket);
      const double want = number(s.at("score_e").at(bucket));
      empty_buckets += std::isnan(want);
      CHECK(same_bits(e.at(bucket).get<double>(), want));
    }
  }
  CHECK(empty_buckets > 0);
}

TEST_CASE("longbench result: per_item holds each record's score, whose mean is the task's score") {
  int sets = 0;
  for (const json& s : golden().at("sets")) {
    const std::string ds = s.at("dataset");
    INFO(ds << " with " << s.at("predictions").size() << " records");
    // eval.py fails on a null all_classes for the classification tasks; those sets have no score.
    if (!s.at("score").is_number()) continue;
    std::vector<json> records;
    for (size_t i = 0; i < s.at("predictions").size(); ++i)
      records.push_back({{"task", ds}, {"index", i}, {"pred", s["predictions"][i]}, {"answers", s["answers"][i]},
                         {"all_classes", s["all_classes"][i]}, {"length", s["lengths"][i]}});
    for (bool e : {false, true}) {
      const json r = lb::build_result({{"e", e}, {"tasks", json::array({ds})}}, records);
      if (!r.at("score_errors").empty()) break;
      size_t n = 0;
      for (const auto& [key, entry] : r.at("per_item").items()) {
        CHECK(key.rfind("scores/" + ds, 0) == 0);
        n += entry.at("n").get<size_t>();
        // The items' mean is the score before eval.py rounds it to 2 decimals.
        const double mean = entry.at("values").get<std::vector<double>>().empty()
                                ? NAN
                                : foxeval::aggregate_items("mean", entry.at("values").get<std::vector<double>>(), {});
        const json& score = e ? r.at("scores").at(ds).at(key.substr(key.rfind('/') + 1)) : r.at("scores").at(ds);
        CHECK(std::abs(mean - score.get<double>()) <= 0.005 + 1e-9);
      }
      CHECK(n == records.size());
      ++sets;
    }
  }
  CHECK(sets >= 40);
}

TEST_CASE("longbench metric: Python's and NumPy's round(x, 2) and np.mean bit for bit") {
  int differ = 0;
  const json& py = golden().at("python_round2");
  const json& np = golden().at("numpy_round2");
  REQUIRE(py.size() == np.size());
  for (size_t i = 0; i < py.size(); ++i) {
    const double x = py[i][0];
    INFO(json(x).dump());
    CHECK(foxeval::python_round2(x) == py[i][1].get<double>());
    CHECK(foxeval::numpy_round2(x) == np[i][1].get<double>());
    differ += py[i][1].get<double>() != np[i][1].get<double>();
  }
  CHECK(differ > 100);  // the two roundings really differ on these values
  for (const json& c : golden().at("numpy_mean")) {
    INFO(c.at("values").size() << " values");
    CHECK(same_bits(foxeval::numpy_mean(c.at("values").get<std::vector<double>>()), number(c.at("mean"))));
  }
}

TEST_CASE("longbench metric: errors name the dataset and the reason") {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const foxeval::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message([] { lb::metric("nosuch", "a", "b", {}); }).find("\"nosuch\"") != std::string::npos);
  // The jieba tasks are scored (tests/test_longbench_zh.cpp); invalid UTF-8 is still an error there.
  for (const char* ds : {"multifieldqa_zh", "dureader", "vcsum"}) {
    CHECK(lb::metric(ds, "北京", "北京", {}) > 0.99);
    CHECK(message([&] { lb::metric(ds, std::string("\xff"), "a", {}); }).find("UTF-8") != std::string::npos);
  }
  CHECK(message([] { lb::metric("passage_retrieval_en", "1", "none", {}); }).find("Paragraph") != std::string::npos);
  CHECK(message([] { lb::metric("qasper", std::string("\xff"), "a", {}); }).find("UTF-8") != std::string::npos);
  CHECK(message([] { lb::score_dataset("qasper", {}, {}, {}); }).find("no records") != std::string::npos);
  CHECK(message([] { lb::score_dataset("qasper", {"a"}, {{"a"}, {"b"}}, {{}}); }).find("one per record") != std::string::npos);
  CHECK(message([] { lb::score_dataset_e("qasper", {"a"}, {{"a"}}, {{}}, {}); }).find("lengths") != std::string::npos);
}

TEST_CASE("longbench metric: str.lower() with Final_Sigma equals CPython's") {
  const json& cases = golden().at("lower");
  REQUIRE(cases.size() >= 100);
  int final_sigmas = 0;
  for (const json& c : cases) {
    const std::string text = c[0], want = c[1];
    INFO(json(text).dump());
    CHECK(foxeval::u32_to_utf8(foxeval::py_lower(foxeval::utf8_to_u32(text, "text"))) == want);
    final_sigmas += want.find("\u03c2") != std::string::npos;
  }
  CHECK(final_sigmas > 10);
}
