// The 11 tasks' configuration facts (dataset, split, output type, metrics), read from
// tasks/lm_eval/tasks.json, which records them from lm-eval 0.4.4's task YAMLs.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace foxeval::lm_eval {

struct MetricSpec {
  std::string metric;       // acc, acc_norm, perplexity, word_perplexity, byte_perplexity, bits_per_byte
  std::string aggregation;  // mean, perplexity, weighted_perplexity, bits_per_byte
  bool higher_is_better = true;
};

// A Hugging Face dataset id (and config, "" for none) that holds the task's documents, and which
// lm-eval YAML names it.
struct HfDatasetId {
  std::string dataset_path, dataset_name, from;
};

struct TaskConfig {
  std::string name, yaml, dataset_path, dataset_name, split;
  std::vector<HfDatasetId> hf_ids;  // where `--data hf` looks, in order (0.4.4's id first)
  std::string output_type;  // multiple_choice, loglikelihood, loglikelihood_rolling
  std::string target_delimiter = " ";
  double version = 0;
  std::vector<MetricSpec> metrics;
};

// tasks.json: $FOXEVAL_TASKS_DIR/lm_eval/tasks.json, else the source tree's tasks/ (compile time),
// else <dir of the executable>/../tasks; the first that exists. Errors name the paths tried.
std::string tasks_json_path();

// Every task of tasks.json, by name (loaded once).
const std::map<std::string, TaskConfig>& task_configs();

// One task; an unknown name is an error listing the known ones.
const TaskConfig& task_config(const std::string& name);

// "a,b,c" -> configs, in the order given; duplicates and unknown names are errors. A name may be a
// group of tasks.json: "all" (the paper's 11) or an lm-eval tag whose members foxeval all runs
// ("ai2_arc"); a tag holding other tasks ("lambada", "super-glue-lm-eval-v1") is refused, naming them.
std::vector<TaskConfig> parse_task_list(const std::string& list);

}  // namespace foxeval::lm_eval
