// `foxeval babilong`: lm-eval 0.4.13's babilong tasks (tasks/babilong/babilong_def.h) at every
// length present, generated through the scheduler (models/requests.h) and scored as lm-eval, one
// record per document through the runner (tasks/run/runner.h: journal, --resume, shards, ranks, header).
//
// Requests are lm-eval's: the context string of babilong_def.h's context(), and as lm-eval's HFLM
// runs it for the FoX checkpoints: tokenized with the model's tokenizer (JSON escaping + GPT-2 BPE),
// BOS first; greedy, at most max_gen_toks (16) new tokens, stopping at EOS (until: [] + EOS); the
// answer decoded without special tokens. --max-length N keeps the last N - 16 prompt tokens as
// HFLM's left truncation does (default: none, every prompt whole).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/babilong/babilong_data.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::babilong {

struct RunSettings {
  std::string model_dir;
  std::string data = "hf";
  std::string out_path;
  std::vector<std::string> tasks;    // empty: qa1..qa5
  std::vector<std::string> lengths;  // empty: every length present
  int64_t limit = 0;                 // > 0: the first N documents of each task and length
  int64_t max_length = 0;            // > 0: HFLM's left truncation to max_length - max_gen_toks tokens
  RunOptions run;
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  int64_t stop_after = -1;  // >= 0: stop (as if interrupted) after this many documents
  GenerateUntilOptions generation;
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// The splits to run: each task at each length the dataset has it at (qa6-qa20: 0k). Without
// `lengths`, the lengths where any of the tasks is found; a length that holds some of the tasks but
// not all is an error (an incomplete copy), as is a length asked for and not found. Errors list the
// places looked at and the command that fetches the data.
std::vector<SplitData> select_splits(const std::string& data, const std::vector<std::string>& tasks,
                                     const std::vector<std::string>& lengths, int64_t limit);

// lm-eval's generate_until request of a document: {length, task, doc_id, context, gen_kwargs}.
nlohmann::json request_json(const SplitData& split, size_t doc_id);

nlohmann::json run_babilong(const RunSettings& settings);

// The result from every document's record (item order): accuracy per task and length, the mean
// per length over the tasks weighted by their documents (lm-eval's group aggregation,
// weight_by_size), the records.
nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

}  // namespace foxeval::babilong
