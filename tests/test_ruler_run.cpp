// `ruler run`'s requests (tasks/ruler/ruler_run.h) against lm-eval 0.4.13:
// tests/fixtures/ruler/prompt_goldens.json (tests/tools/ruler_prompt_goldens.py) holds every task's
// max_gen_toks and target_delimiter read from lm-eval's YAMLs, and the prompt lm-eval's own
// build_qa_turn makes of the first doc of each generated task and of edge cases at the join
// (whitespace of every kind, empty gen_prefix or input, non-ASCII). Also the aggregation shared by
// `ruler score` and `ruler run` (ruler_results.h).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "data/json_file.h"
#include "tasks/ruler/ruler_results.h"
#include "tasks/ruler/ruler_run.h"

using nlohmann::json;
namespace ruler = foxeval::ruler;

TEST_CASE("ruler run: max_gen_toks, target_delimiter and the prompt equal lm-eval's") {
  const json g = foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/ruler/prompt_goldens.json");
  const json defs = foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tasks/ruler/ruler_tasks.json");
  REQUIRE(g["tasks"].size() == 13);
  for (const auto& [task, want] : g["tasks"].items()) {
    CAPTURE(task);
    const ruler::TaskGeneration got = ruler::task_generation(defs, task);
    CHECK(got.max_gen_toks == want["max_gen_toks"].get<int64_t>());
    CHECK(got.target_delimiter == want["target_delimiter"].get<std::string>());
  }
  size_t delimited = 0;
  for (const json& p : g["prompts"]) {
    CAPTURE(p.dump().substr(0, 300));
    const std::string task = p["task"], input = p["input"], prefix = p["gen_prefix"], want = p["prompt"];
    REQUIRE(ruler::lm_eval_prompt(input, prefix, ruler::task_generation(defs, task).target_delimiter) == want);
    delimited += want != input + prefix;
  }
  CHECK(delimited >= 20);  // the goldens exercise both sides of the rule
  CHECK(delimited < g["prompts"].size() - 100);
}

TEST_CASE("ruler aggregate_scores: per task and length, the group and category means, per_item") {
  const json defs = foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tasks/ruler/ruler_tasks.json");
  std::vector<ruler::ScoredDoc> docs = {{"niah_single_1", 4096, 0, 1.0}, {"niah_single_1", 4096, 1, 0.0},
                                        {"niah_single_1", 8192, 2, 1.0}, {"ruler_vt", 4096, 0, 0.4},
                                        {"ruler_vt", 4096, 1, 0.6},      {"ruler_cwe", 4096, 0, 0.3}};
  const json r = ruler::aggregate_scores(docs, defs.at("scoring"));
  CHECK(r["tasks"] == json({"niah_single_1", "ruler_vt", "ruler_cwe"}));
  CHECK(r["lengths"] == json({4096, 8192}));
  CHECK(r["scores"]["niah_single_1"]["4096"] == 0.5);
  CHECK(r["n"]["ruler_vt"]["4096"] == 2);
  CHECK(r["ruler"]["4096"].get<double>() == doctest::Approx((0.5 + 0.5 + 0.3) / 3).epsilon(1e-15));
  CHECK(r["ruler"]["8192"] == 1.0);  // only niah_single_1 there
  CHECK(r["categories"]["4096"]["NIAH"] == 0.5);
  CHECK(r["categories"]["4096"]["multi-hop tracing"] == 0.5);
  CHECK(r["categories"]["4096"]["aggregation"] == 0.3);
  CHECK_FALSE(r["categories"]["4096"].contains("QA"));
  CHECK(r["per_item"]["scores/ruler_vt/4096"]["ids"] == json({"ruler_vt/4096/0", "ruler_vt/4096/1"}));
  // Unequal doc counts at 4096: the mean of the task means is not a mean over docs, so no per_item for it.
  CHECK_FALSE(r["per_item"].contains("ruler/4096"));
  CHECK(r["per_item"]["ruler/8192"]["n"] == 1);
}
