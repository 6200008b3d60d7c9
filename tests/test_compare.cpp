// `foxeval compare` (tasks/results/compare.h) on constructed pairs with a known answer: a uniform gain, a
// worse loss, a result against itself, accuracies (McNemar), and the refusals (other data, other
// items, other tasks, no per-item scores).
#include <doctest/doctest.h>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/compare.h"
#include "tests/temp_files.h"

namespace foxeval {
namespace {

using nlohmann::json;

// A result of `task` whose metric `metric` has these items (ids "0", "1", ...).
json result(const std::string& task, const std::string& metric, const std::vector<double>& values,
            const std::string& data = "sha256:aa", const std::string& model = "/m/a") {
  ItemScores s;
  for (size_t i = 0; i < values.size(); ++i) s.ids.push_back(std::to_string(i));
  s.values = values;
  return {{"header", {{"task", task}, {"settings", {{"model", model}, {"model_digest", "sha256:" + model.substr(3)}, {"data_digest", data},
                                                  {"dtype", "float32"}}}}},
          {"per_item", {{metric, per_item_entry(s)}}}};
}

struct Files {
  test::TempDir dir{"compare"};
  std::string write(const std::string& name, const json& j) {
    const std::string p = (dir.path / name).string();
    write_json_atomic(p, j);
    return p;
  }
};

TEST_CASE("compare: a uniform gain is better, a higher loss worse, a result against itself no different") {
  Files f;
  std::vector<double> base, up, loss, worse_loss;
  for (int i = 0; i < 30; ++i) {
    base.push_back(1 + i % 10);      // NIAH-like 1..10 scores
    up.push_back(1 + i % 10 + 2);    // every cell 2 better
    loss.push_back(3.0 + 0.01 * i);
    worse_loss.push_back(3.25 + 0.01 * i);
  }
  const std::string a = f.write("a.json", result("niah", "mean", base));
  const std::string b = f.write("b.json", result("niah", "mean", up, "sha256:aa", "/m/b"));
  FileComparison c = compare_result_files(a, b, "A", "B", {});
  REQUIRE(c.metrics.size() == 1);
  const MetricComparison& m = c.metrics[0];
  CHECK(m.paired.n == 30);
  CHECK(m.paired.difference == doctest::Approx(2.0));
  CHECK(m.paired.low == doctest::Approx(2.0));
  CHECK(m.paired.high == doctest::Approx(2.0));
  CHECK(m.excludes_zero);
  CHECK(m.verdict == "better");
  REQUIRE(c.notes.size() == 1);  // the model differs: a note, not a refusal
  CHECK(c.notes[0].find("model_digest") != std::string::npos);

  const std::string la = f.write("la.json", result("loss", "val/loss_avg_len_512", loss));
  const std::string lb = f.write("lb.json", result("loss", "val/loss_avg_len_512", worse_loss, "sha256:aa", "/m/b"));
  c = compare_result_files(la, lb, "A", "B", {});
  CHECK(c.metrics[0].direction == Direction::Lower);
  CHECK(c.metrics[0].paired.difference == doctest::Approx(0.25));
  CHECK(c.metrics[0].verdict == "worse");
  CHECK(compare_result_files(lb, la, "B", "A", {}).metrics[0].verdict == "better");

  c = compare_result_files(a, a, "A", "A", {});
  CHECK(c.metrics[0].paired.difference == 0);
  CHECK_FALSE(c.metrics[0].excludes_zero);
  CHECK(c.metrics[0].verdict == "no clear difference");
}

TEST_CASE("compare: accuracies get McNemar's exact p; a tie in discordant pairs is no clear difference") {
  Files f;
  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) {  // 5 items only x gets, 5 only y gets, the rest alike
    x.push_back(i < 5 ? 1 : i < 10 ? 0 : i % 2);
    y.push_back(i < 5 ? 0 : i < 10 ? 1 : i % 2);
  }
  const std::string a = f.write("a.json", result("lm-eval", "results/piqa/acc,none", x));
  const std::string b = f.write("b.json", result("lm-eval", "results/piqa/acc,none", y, "sha256:aa", "/m/b"));
  const MetricComparison m = compare_result_files(a, b, "A", "B", {}).metrics[0];
  REQUIRE(m.paired.binary);
  CHECK(m.paired.a_only == 5);
  CHECK(m.paired.b_only == 5);
  CHECK(m.paired.mcnemar_p == 1.0);
  CHECK(m.paired.difference == 0);
  CHECK(m.verdict == "no clear difference");
}

TEST_CASE("compare: other data, other items, other tasks and results without per-item scores are refused") {
  Files f;
  const std::vector<double> v = {1, 2, 3, 4, 5, 6};
  const std::string a = f.write("a.json", result("niah", "mean", v));
  const std::string other_data = f.write("d.json", result("niah", "mean", v, "sha256:bb"));
  CHECK(test::error_of([&] { compare_result_files(a, other_data, "A", "B", {}); }).find("different data") != std::string::npos);
  CHECK(test::error_of([&] { compare_result_files(a, other_data, "A", "B", {}); }).find("data_digest") != std::string::npos);

  const std::string fewer = f.write("f.json", result("niah", "mean", {1, 2, 3, 4}));
  CHECK(test::error_of([&] { compare_result_files(a, fewer, "A", "B", {}); }).find("--intersect") != std::string::npos);
  CompareOptions o;
  o.intersect = true;
  const MetricComparison m = compare_result_files(a, fewer, "A", "B", o).metrics[0];
  CHECK(m.paired.n == 4);
  CHECK(m.only_a == 2);
  CHECK(m.only_b == 0);
  CHECK(m.paired.difference == 0);  // the shared items are equal

  const std::string other_task = f.write("t.json", result("longbench", "mean", v));
  CHECK(test::error_of([&] { compare_result_files(a, other_task, "A", "B", {}); }).find("different tasks") != std::string::npos);
  json bare = result("niah", "mean", v);
  bare.erase("per_item");
  const std::string old = f.write("old.json", bare);
  CHECK(test::error_of([&] { compare_result_files(a, old, "A", "B", {}); }).find("no per_item") != std::string::npos);
}

TEST_CASE("compare: folders pair their results by relative path") {
  Files f;
  std::filesystem::create_directories(f.dir.path / "x");
  std::filesystem::create_directories(f.dir.path / "y");
  f.write("x/niah.json", result("niah", "mean", {1, 2}));
  f.write("y/niah.json", result("niah", "mean", {2, 3}));
  f.write("x/loss.json", result("loss", "val/loss_avg_len_512", {1, 2}));
  f.write("x/suite.json", json::object());
  std::vector<std::string> unpaired;
  const auto pairs = compare_pairs((f.dir.path / "x").string(), (f.dir.path / "y").string(), &unpaired);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].first.find("niah.json") != std::string::npos);
  REQUIRE(unpaired.size() == 1);
  CHECK(unpaired[0].find("loss.json") != std::string::npos);
}

}  // namespace
}  // namespace foxeval
