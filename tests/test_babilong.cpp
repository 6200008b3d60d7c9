// `foxeval babilong`: requests equal lm-eval 0.4.13's on the same documents and scores of given
// predictions equal its process_results (goldens by tests/tools/babilong_golden.py, lm-eval itself
// on synthetic data in RMT-team/babilong-1k-samples' hub layout); the data found in the caches and
// in a folder; lengths present; a run end to end, resumed.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include "data/json_file.h"
#include "tasks/babilong/babilong_run.h"
#include "tasks/run/runner.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

const std::string kSnapshot =
    "tests/fixtures/babilong/hub/datasets--RMT-team--babilong-1k-samples/snapshots/fedcba9876543210fedcba9876543210fedcba98";

struct FixtureCaches {
  test::TempDir empty;
  test::ScopedEnv hub{"HF_HUB_CACHE", test::source_path("tests/fixtures/babilong/hub").c_str()};
  test::ScopedEnv datasets{"HF_DATASETS_CACHE", empty.path.c_str()};
};

nlohmann::json golden() { return read_json(test::source_path("tests/fixtures/babilong/golden.json")); }

std::vector<std::string> all_tasks() {
  std::vector<std::string> t;
  for (int i = 1; i <= 20; ++i) t.push_back("qa" + std::to_string(i));
  return t;
}

}  // namespace

TEST_CASE("babilong: requests equal lm-eval 0.4.13's for the same documents") {
  FixtureCaches caches;
  const std::vector<babilong::SplitData> splits = babilong::select_splits("hf", all_tasks(), {}, 0);
  std::map<std::string, nlohmann::json> mine;
  for (const babilong::SplitData& sp : splits)
    for (size_t d = 0; d < sp.docs.size(); ++d) {
      const nlohmann::json r = babilong::request_json(sp, d);
      mine[fmt::format("{}/{}/{}", sp.length, sp.task, d)] = r;
    }
  const nlohmann::json g = golden().at("requests");
  REQUIRE(mine.size() == g.size());  // qa1..qa20 at 0k, qa1..qa5 at 2k (qa11-qa20 name 0k only), 3 documents each
  int equal = 0;
  for (const nlohmann::json& want : g) {
    const std::string id = fmt::format("{}/{}/{}", want.at("length").get<std::string>(), want.at("task").get<std::string>(),
                                       want.at("doc_id").get<int64_t>());
    REQUIRE(mine.count(id) == 1);
    CHECK(mine[id].at("context") == want.at("context"));
    CHECK(mine[id].at("gen_kwargs") == want.at("gen_kwargs"));
    equal += mine[id].at("context") == want.at("context");
  }
  CHECK(equal == 75);
}

TEST_CASE("babilong: scores of given predictions equal lm-eval's process_results") {
  int n = 0;
  const nlohmann::json g = golden();
  for (const nlohmann::json& c : g.at("scores")) {
    CAPTURE(c.dump());
    CHECK(babilong::score(c.at("target").get<std::string>(), c.at("prediction").get<std::string>()) == c.at("acc").get<double>());
    ++n;
  }
  CHECK(n == 61);
}

TEST_CASE("babilong: default tasks qa1-qa5 at the lengths present; a folder in the hub's layout gives the same") {
  FixtureCaches caches;
  const std::vector<babilong::SplitData> splits = babilong::select_splits("hf", {}, {}, 2);
  REQUIRE(splits.size() == 10);
  CHECK(splits[0].length == "0k");
  CHECK(splits[0].task == "qa1");
  CHECK(splits[9].length == "2k");
  CHECK(splits[9].task == "qa5");
  CHECK(splits[0].docs.size() == 2);  // --limit 2
  CHECK(splits[0].identity["source"] == "hub cache");
  const std::vector<babilong::SplitData> folder = babilong::select_splits(test::source_path(kSnapshot), {}, {}, 2);
  REQUIRE(folder.size() == 10);
  for (size_t i = 0; i < 10; ++i) CHECK(babilong::request_json(folder[i], 1) == babilong::request_json(splits[i], 1));
  // A length asked for and absent, an unknown task: errors that say so.
  CHECK(test::error_of([] { babilong::select_splits("hf", {}, {"4k"}, 0); }).find("length 4k (--lengths) is not in") !=
        std::string::npos);
  CHECK(test::error_of([] { babilong::select_splits("hf", {"qa21"}, {}, 0); }).find("unknown task 'qa21'") != std::string::npos);
  test::TempDir nothing;
  const std::string none = test::error_of([&] { babilong::select_splits(nothing.path.string(), {}, {}, 0); });
  CHECK(none.find("datasets.load_dataset('RMT-team/babilong-1k-samples', '0k', split='qa1')") != std::string::npos);
}

TEST_CASE("babilong run: scored predictions, and an interrupted run resumed gives the same result") {
  FixtureCaches caches;
  test::TempDir dir;
  babilong::RunSettings s;
  s.model_dir = test::shared_path("fixtures/trained/fox_pro_tiny_pg");
  s.tasks = {"qa1", "qa2"};
  s.limit = 2;
  s.out_path = (dir.path / "whole.json").string();
  s.generation.max_batch = 2;
  const nlohmann::json whole = babilong::run_babilong(s);
  REQUIRE(whole.at("samples").size() == 8);  // 2 tasks x 2 lengths x 2 documents
  for (const nlohmann::json& r : whole.at("samples")) {
    CHECK(r.at("new_tokens").get<int64_t>() <= 16);
    CHECK(r.at("acc") == babilong::score(r.at("target"), r.at("prediction")));
  }
  CHECK(whole.at("lengths") == nlohmann::json({"0k", "2k"}));
  CHECK(whole.at("n").at("qa1").at("2k") == 2);
  s.out_path = (dir.path / "resumed.json").string();
  s.stop_after = 3;
  CHECK_THROWS_AS(babilong::run_babilong(s), RunInterrupted);
  s.stop_after = -1;
  s.resume = true;
  const nlohmann::json resumed = babilong::run_babilong(s);
  CHECK(resumed.at("samples") == whole.at("samples"));
  CHECK(resumed.at("acc") == whole.at("acc"));
}

TEST_CASE("babilong: per_item holds each document's accuracy per task and length, and per length over the tasks") {
  // qa1 at 0k: 1, 0, 1; qa2 at 0k: 0; qa1 at 1k: 1, 1 (records in item order, as the runner gives them).
  std::vector<nlohmann::json> records;
  const std::vector<std::tuple<std::string, std::string, int, double>> docs = {
      {"qa1", "0k", 0, 1}, {"qa1", "0k", 1, 0}, {"qa1", "0k", 2, 1}, {"qa2", "0k", 0, 0}, {"qa1", "1k", 0, 1}, {"qa1", "1k", 1, 1}};
  for (const auto& [task, length, doc, acc] : docs)
    records.push_back({{"task", task}, {"length", length}, {"doc_id", doc}, {"acc", acc}});
  const nlohmann::json r = babilong::build_result(nlohmann::json::object(), records);
  const nlohmann::json& p = r.at("per_item");
  CHECK(p.at("acc/qa1/0k").at("ids") == nlohmann::json({"qa1/0k/0", "qa1/0k/1", "qa1/0k/2"}));
  CHECK(p.at("acc/qa1/0k").at("values") == nlohmann::json({1.0, 0.0, 1.0}));
  CHECK(p.at("acc/qa1/0k").at("n") == 3);
  // lm-eval's mean_stderr: sample stddev / sqrt(n) = sqrt(1/3) / sqrt(3) = 1/3.
  CHECK(p.at("acc/qa1/0k").at("stderr").get<double>() == doctest::Approx(1.0 / 3).epsilon(1e-14));
  CHECK(p.at("acc/qa2/0k").at("n") == 1);
  CHECK(p.at("acc/qa2/0k").at("stderr") == "N/A");
  // The group's mean at a length is over its documents (weighted by tasks' documents, as lm-eval's group).
  CHECK(p.at("mean_by_length/0k").at("ids") == nlohmann::json({"qa1/0k/0", "qa1/0k/1", "qa1/0k/2", "qa2/0k/0"}));
  CHECK(r.at("mean_by_length").at("0k").get<double>() == 0.5);
  CHECK(p.at("mean_by_length/1k").at("n") == 2);
  // Every metric's per_item aggregates to the metric itself.
  CHECK(r.at("acc").at("qa1").at("0k").get<double>() == 2.0 / 3);
  CHECK(p.size() == 5);
}
