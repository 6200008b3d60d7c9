// `foxeval lm-eval`: the paper's 11 lm-evaluation-harness 0.4.4 tasks, zero-shot, through the
// Runner (journal, resume, shards, progress, one atomic result). One work item per document
// ("{task}/{doc_id}"); its record holds the document's answers and what scoring needs, so the
// result (and `foxeval merge` of shard parts) is rebuilt from records alone.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "tasks/lm_eval/docs.h"
#include "tasks/lm_eval/metrics.h"
#include "tasks/lm_eval/task_config.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::lm_eval {

// One task's evaluated documents, as read from --data.
struct TaskDocs {
  TaskConfig config;
  std::string path;                         // where they came from, for messages (tasks/lm_eval/task_data.h)
  nlohmann::json data_identity;             // what the result identity records of the data
  int64_t total = 0;                        // documents in the split (lm-eval's n-samples "original")
  std::vector<nlohmann::ordered_json> raw;  // the first `limit` documents, as read (keys in column order)
  std::vector<DocParts> docs;               // their doc_to_* parts
};

// DIR/{task}.jsonl or DIR/{task}.parquet; neither or both is an error naming the paths.
std::string task_data_file(const std::string& data_dir, const std::string& task);

// Reads and renders the first `limit` documents (limit < 0: all), as lm-eval's --limit. `data`:
// "hf" (the local Hugging Face caches) or a folder (tasks/lm_eval/task_data.h).
// `limit_fraction` in (0, 1) instead: the first ceil(total * fraction) documents (lm-eval's
// --limit below 1).
TaskDocs load_task_docs(const TaskConfig& config, const std::string& data, int64_t limit, double limit_fraction = 0);

// Every request of the documents as `foxeval lm-eval requests` writes them:
// {"task","doc_id","index","kind","context","continuation"} or {"task","doc_id","index","kind","text"}.
std::vector<nlohmann::json> request_lines(const TaskDocs& docs);

struct LmEvalSettings {
  std::string model_dir, data_dir = "hf", out_path, tasks;
  std::string log_samples_path;  // optional: per-document details (JSON lines)
  int64_t limit = -1;
  double limit_fraction = 0;       // lm-eval's --limit below 1
  std::string output_path;         // lm-eval's --output_path tree (tasks/lm_eval/lm_eval_output.h)
  bool output_log_samples = false;  // lm-eval's --log_samples: samples_{task}_{date}.jsonl in that tree
  std::string model_args;          // lm-eval's --model_args, recorded in the tree's config
  nlohmann::json batch_size_given;  // --batch_size as given ("auto" or the number), for the tree
  int64_t batch_size = 0, max_batch_tokens = 32768;
  int64_t max_length = 16384;  // HFLM max_length of the official run
  RunOptions run;
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  int64_t stop_after_docs = -1;  // interrupt (exit 3, resumable) after this many documents
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// Runs the tasks and writes the result (or this shard's part). Throws RunInterrupted (tasks/run/runner.h)
// when stopped; the journal keeps finished documents.
nlohmann::json run_lm_eval(const LmEvalSettings& settings);

// lm-eval's results dict from the run identity and every document's record, in item order
// (registered as the "lm-eval" ResultBuilder for `foxeval merge`).
nlohmann::json build_lm_eval_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

// A run record's scoring facts and answers (the inverse of what the run journals).
void record_answers(const nlohmann::json& record, DocScoring* scoring, std::vector<Answer>* answers);

// What process_results needs of a doc: gold, choice lengths in characters (lm-eval's acc_norm), words, bytes.
DocScoring scoring_of(const DocParts& d);

}  // namespace foxeval::lm_eval
