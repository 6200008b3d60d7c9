// lm-eval 0.4.4's --output_path tree, so lm-eval's own tools read a foxeval run:
//   DIR/{model_name_sanitized}/results_{date}.json      (EvaluationTracker.save_results_aggregated)
//   DIR/{model_name_sanitized}/samples_{task}_{date}.jsonl  (save_results_samples, with --log_samples)
// with lm-eval's keys beside foxeval's header, and samples as lm-eval's evaluator builds them.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tasks/lm_eval/lm_eval_task.h"

namespace foxeval::lm_eval {

// lm_eval.utils.sanitize_model_name: re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", name).
std::string sanitize_model_name(const std::string& name);

// GeneralConfigTracker._get_model_name: the value after the first of "peft=", "delta=",
// "pretrained=", "model=", "path=", "engine=" found in the string, up to the next ','; "" if none.
std::string model_name_from_args(const std::string& model_args);

// DIR/{model_name_sanitized}: the folder lm-eval writes a model's results into. A model name that
// sanitises to "." or ".." (e.g. pretrained=..) would put it at or above DIR: refused, naming it.
std::string model_output_dir(const std::string& output_path, const std::string& model_args);

// datetime.now().isoformat().replace(":", "-"): local time, microseconds unless they are 0.
std::string date_id_now();

// One line of samples_{task}_{date}.jsonl (before json.dumps): doc_id, doc (after the task's
// process_docs), target (str), arguments {gen_args_i: {arg_j}}, resps and filtered_resps (every
// value as Python's str()), doc_hash, prompt_hash, target_hash, then the metrics.
nlohmann::ordered_json sample_line(const TaskDocs& docs, size_t doc_id, const DocScoring& scoring,
                                   const std::vector<Answer>& answers);

struct OutputTree {
  std::string output_path;  // DIR
  bool log_samples = false;
  std::string model_args;   // lm-eval's --model_args as given, or made from --model/--dtype
  nlohmann::json batch_size;  // as lm-eval records it: "auto" or the number as given
  std::string device;
  int64_t limit_count = -1;   // documents per task (-1: all)
  double limit_fraction = 0;  // --limit given as a fraction below 1 (0: not)
  double start_time = 0;      // seconds since the epoch when the run started
};

// Writes the tree (atomically, file by file) and returns the results file's path.
std::string write_output_tree(const OutputTree& tree, const nlohmann::json& result, const std::vector<TaskDocs>& tasks,
                              const std::vector<nlohmann::json>& records);

}  // namespace foxeval::lm_eval
