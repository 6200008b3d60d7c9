// `foxeval longbench run`: pred.py over every record of the selected tasks as one resumable,
// shardable run (tasks/run/runner.h): greedy generation until EOS or the task's length, the prediction
// decoded skipping special tokens, scores as eval.py.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "models/model.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/longbench/longbench_prompt_set.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::longbench {

struct RunSettings {
  std::string model_dir;
  PromptSettings prompts;
  std::string out_dir;          // run.json (+ journal), and the official files after a whole run
  RunOptions run;               // device, dtype
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  int64_t max_new_tokens = 0;   // > 0: caps dataset2maxlen (for quick checks; recorded in the identity)
  int64_t stop_after = -1;      // >= 0: stop (as if interrupted) after this many records
  GenerateUntilOptions generation;  // the scheduler's batch, memory and CUDA-graph settings
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// Runs (or resumes) and returns what the runner wrote: the result, or this shard's part. With one
// shard the official files are written to out_dir too. Throws RunInterrupted when stopped.
nlohmann::json run_longbench(const RunSettings& settings);

}  // namespace foxeval::longbench
