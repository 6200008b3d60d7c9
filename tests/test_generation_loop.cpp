// tasks/run/generation_loop.h: the claim-generate-journal loop of the generation tasks (niah,
// longbench, babilong, ruler) on the official fox_pro fixture (CPU, float32): every item answered
// once with the engine's own answer, --stop-after as an interrupt that --resume continues, and
// header.generation, summed over shard parts by merge.
#include <ATen/ATen.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <fstream>
#include <limits>
#include <stdexcept>

#include "data/errors.h"
#include "data/json_file.h"
#include "models/registry.h"
#include "tasks/run/generation_loop.h"
#include "tasks/run/result_file.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

namespace foxeval {
namespace {

nlohmann::json build_answers(const nlohmann::json&, const std::vector<nlohmann::json>& records) {
  return {{"answers", records}};
}
ResultBuilderRegistrar register_loop_test_task("generation-loop-test", build_answers);

// Five prompts of different lengths (the runner claims longest first) and 6 new tokens each.
std::vector<int64_t> prompt(size_t i) {
  std::vector<int64_t> ids;
  for (size_t k = 0; k < 3 + 2 * i; ++k) ids.push_back(static_cast<int64_t>(7 + 13 * i + k));
  return ids;
}
constexpr size_t kItems = 5;
constexpr int64_t kNew = 6;

nlohmann::json run_loop(CausalLM& model, const std::string& out, bool resume, int64_t stop_after, int64_t shards = 1,
                        int64_t index = 0, GenerationTotals* totals_out = nullptr) {
  GenerationLoop loop("generation-loop-test", GenerateUntilOptions{}, stop_after, "cpu");
  loop.per_batch = 2;
  RunnerSettings rs;
  rs.out_path = out;
  rs.resume = resume;
  rs.num_shards = shards;
  rs.shard_index = index;
  rs = with_generation_stats(rs, loop);
  std::vector<WorkItem> items;
  for (size_t i = 0; i < kItems; ++i) items.push_back({"p" + std::to_string(i), static_cast<double>(prompt(i).size())});
  RecordRunner runner(rs, "generation-loop-test", {{"mode", "x"}}, items);
  run_generation_loop(
      runner, model, loop, [](size_t i) { return OpenTokens{static_cast<int64_t>(prompt(i).size()), kNew}; },
      [](size_t i) { return GenerationRequest{prompt(i), kNew, {}}; },
      [](size_t i, const GenerationRequest& r, const GenerationAnswer& a) {
        return nlohmann::json{{"item", i}, {"prompt_tokens", r.prompt.size()}, {"ids", a.ids}};
      });
  if (totals_out) *totals_out = loop.totals;
  return runner.complete(build_answers);
}

}  // namespace

TEST_CASE("generation loop: every item once, the engine's answer; stop-after resumes to the same records") {
  test::TempDir dir("generation_loop");
  auto model = load_model(test::source_path("tests/fixtures/official/fox_pro"), RunOptions{"cpu", "float32"});
  GenerationTotals totals;
  const nlohmann::json whole = run_loop(*model, (dir.path / "whole.json").string(), false, -1, 1, 0, &totals);
  const nlohmann::json& answers = whole.at("answers");
  REQUIRE(answers.size() == kItems);
  // Each record is the engine's answer to its prompt, in the batches the loop claimed (2 at a time,
  // longest first: {4, 3}, {2, 1}, {0}; an answer may depend on its bucket's slot count).
  std::vector<std::vector<int64_t>> expected(kItems);
  for (const std::vector<size_t>& batch : {std::vector<size_t>{4, 3}, {2, 1}, {0}}) {
    std::vector<GenerationRequest> requests;
    for (size_t i : batch) requests.push_back({prompt(i), kNew, {}});
    generate_until(*model, requests, GenerateUntilOptions{},
                   [&](size_t k, const GenerationAnswer& a) { expected[batch[k]] = a.ids; });
  }
  for (size_t i = 0; i < kItems; ++i) {
    CHECK(answers[i].at("item") == i);
    CHECK(answers[i].at("prompt_tokens") == prompt(i).size());
    CHECK(answers[i].at("ids").get<std::vector<int64_t>>() == expected[i]);
  }
  CHECK(totals.requests == static_cast<int64_t>(kItems));
  CHECK(totals.new_tokens == static_cast<int64_t>(kItems) * kNew);
  const nlohmann::json& g = whole.at("header").at("generation");
  CHECK(g.at("requests") == kItems);
  CHECK(g.at("new_tokens") == static_cast<int64_t>(kItems) * kNew);
  CHECK(g.at("prompt_tokens") == 3 + 5 + 7 + 9 + 11);

  // --stop-after 2: interrupted after the second answer, journaled; --resume finishes the rest.
  const std::string out = (dir.path / "stopped.json").string();
  CHECK_THROWS_AS(run_loop(*model, out, false, 2), RunInterrupted);
  const nlohmann::json resumed = run_loop(*model, out, true, -1);
  CHECK(resumed.at("answers") == answers);
  CHECK(resumed.at("header").at("generation").at("requests") == kItems - 2);  // this run's requests only
}

TEST_CASE("generation loop: header.generation adds up over shard parts in merge") {
  test::TempDir dir("generation_loop");
  auto model = load_model(test::source_path("tests/fixtures/official/fox_pro"), RunOptions{"cpu", "float32"});
  std::vector<std::string> parts;
  for (int64_t s = 0; s < 2; ++s) {
    parts.push_back((dir.path / ("part" + std::to_string(s) + ".json")).string());
    (void)run_loop(*model, parts.back(), false, -1, 2, s);
  }
  const nlohmann::json merged = merge_task_parts(parts, (dir.path / "merged.json").string());
  const nlohmann::json& g = merged.at("header").at("generation");
  CHECK(g.at("requests") == kItems);
  CHECK(g.at("new_tokens") == static_cast<int64_t>(kItems) * kNew);
  CHECK(g.at("decode_tokens_per_s").is_number());
  // A damaged count names its field and the file.
  nlohmann::json bad = read_json(parts[1]);
  bad["generation"]["new_tokens"] = -1;
  const std::string bad_path = (dir.path / "bad1.json").string();
  std::ofstream(bad_path) << bad.dump();
  const std::string err = test::error_of<Error>([&] { merge_task_parts({parts[0], bad_path}, (dir.path / "m.json").string()); });
  CHECK(err.find("bad1.json") != std::string::npos);
  CHECK(err.find("new_tokens must be a non-negative integer") != std::string::npos);
  // Counts whose sum does not fit 64 bits (an edited part): refused, not wrapped.
  nlohmann::json huge = read_json(parts[1]);
  huge["generation"]["prompt_tokens"] = std::numeric_limits<int64_t>::max();
  const std::string huge_path = (dir.path / "huge1.json").string();
  std::ofstream(huge_path) << huge.dump();
  const std::string overflow =
      test::error_of<Error>([&] { merge_task_parts({parts[0], huge_path}, (dir.path / "m.json").string()); });
  CHECK(overflow.find("generation counts: prompt_tokens: ") != std::string::npos);
  CHECK(overflow.find("does not fit a 64-bit count") != std::string::npos);
}

TEST_CASE("run statistics: a source of a kind nobody registered is refused when the runner starts") {
  test::TempDir dir("generation_loop");
  RunnerSettings rs;
  rs.out_path = (dir.path / "x.json").string();
  rs.stats = {{"no-such-statistic", [] { return nlohmann::json(); }}};
  CHECK_THROWS_AS(RecordRunner(rs, "generation-loop-test", {{"mode", "x"}}, {{"a", 1}}), std::logic_error);
}

}  // namespace foxeval
