// `foxeval ruler run`: RULER's docs (ruler_samples.h, equal to lm-eval 0.4.13's) generated through
// the scheduler (models/requests.h) and scored as lm-eval (ruler_results.h), one record per doc
// through the runner (tasks/run/runner.h: journal, --resume, shards, ranks, the common header).
//
// Requests are lm-eval's for a base model (no chat template): the prompt is the doc's `input`,
// then the task's target_delimiter when neither input's last character nor gen_prefix's first is
// whitespace, then `gen_prefix` (api/task.py build_qa_turn); tokenized as HFLM does for the FoX
// checkpoints (JSON escaping + GPT-2 BPE, BOS first); greedy, at most the task YAML's max_gen_toks
// new tokens, stopping at EOS (until: [] + EOS); the answer decoded without special tokens and
// scored without gen_prefix (lm-eval's process_results sees the generated text only).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/ruler/ruler_samples.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::ruler {

struct RunSettings {
  SamplesSettings samples;  // model_dir (also the model run), data folders, tasks, lengths
  std::string out_path;
  int64_t limit = 0;       // > 0: the first N docs of each task at each length
  int64_t max_length = 0;  // > 0: HFLM's left truncation to max_length - max_gen_toks prompt tokens
  int64_t max_gen_toks = 0;  // > 0: every task's max_gen_toks (lm-eval's --gen_kwargs max_gen_toks=N)
  RunOptions run;
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load samples.model_dir.
  std::shared_ptr<const LoadedModel> model;
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  int64_t stop_after = -1;  // >= 0: stop (as if interrupted) after this many docs
  GenerateUntilOptions generation;
};

// A task's generation settings (ruler_tasks.json "generation").
struct TaskGeneration {
  int64_t max_gen_toks = 0;
  std::string target_delimiter;
};
TaskGeneration task_generation(const nlohmann::json& ruler_tasks, const std::string& task);

// The prompt lm-eval builds for a doc (see above), as text.
std::string lm_eval_prompt(const std::string& input, const std::string& gen_prefix, const std::string& target_delimiter);

nlohmann::json run_ruler(const RunSettings& settings);

// The result from every doc's record (item order): aggregate_scores' fields, the records.
nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

}  // namespace foxeval::ruler
