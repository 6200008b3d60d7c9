// `foxeval niah prompts|run|score`: the sweep through the Runner (journal, resume, shards) and
// generate_until, the official prompt files, and scoring of prediction folders.
#pragma once
#include "data/json_file.h"  // write_text_atomic
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/niah/niah_prompts.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::niah {

// What defines the benchmark of a run: the mode's strings (or overrides) and the grid.
struct NiahSpec {
  std::string mode = "standard";
  std::string needle, question, answer;  // empty: the mode's
  std::vector<int64_t> lengths, depths;  // empty: the mode's (the paper's grid)
};

// The mode with its overrides applied and the grid validated. Errors name the flag.
struct ResolvedSpec {
  Mode mode;
  PromptDefinition def;
};
ResolvedSpec resolve_spec(const NiahSpec& spec);

// `foxeval niah prompts`: every cell's prompt file into out_dir, as prompt.py names and fills
// them. Everything is checked and built before the first file is written; each file is atomic.
// Returns the number of files.
int64_t write_prompt_files(const NiahSpec& spec, const std::string& haystack_dir, const std::string& out_dir);

struct RunSettings {
  NiahSpec spec;
  std::string model_dir, haystack_dir, out_path;
  std::string pred_dir;  // also write the official pred.py layout here when not empty
  int64_t max_new_tokens = 1024;
  GenerateUntilOptions generation;      // the scheduler's batch, memory and CUDA-graph settings
  int64_t stop_after = -1;             // stop (resumably) after the N-th cell finishes
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  RunOptions run;
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// The whole sweep. Throws RunInterrupted (tasks/run/runner.h) on a signal or --stop-after.
nlohmann::json run_sweep(const RunSettings& s);


// Records {length, depth, prediction} from an official-layout prediction folder
// (<prefix>_len_{L}_depth_{D*100}.txt with its .txt.done; as eval.py, a .txt without .done is
// skipped with a note on stderr; the text is strip()ped). Cells come in grid order (length, then
// depth). Errors name the file when a name does not parse or the folder holds no prediction.
std::vector<nlohmann::json> read_prediction_folder(const std::string& dir, const std::string& prefix);

// The identity of a scoring of predictions (no model).
nlohmann::json score_identity(const ResolvedSpec& spec, const std::string& source);

// Prints the mean by length and by depth (stdout).
void print_summary(const nlohmann::json& result);

}  // namespace foxeval::niah
