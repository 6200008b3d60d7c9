// Every prompt of a LongBench run: the selected tasks' records (data order), each with its
// pred.py token ids. Shared by `foxeval longbench prompts` and `foxeval longbench run`.
#pragma once
#include "data/json_file.h"  // write_text_atomic
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/longbench/longbench_config.h"
#include "tasks/longbench/longbench_data.h"

namespace foxeval {
class Gpt2Tokenizer;
}

namespace foxeval::longbench {

struct PromptSettings {
  std::string data_dir;
  std::string config_dir;  // empty: the bundled config
  std::string tasks;       // comma-separated; empty: the default list
  bool e = false;          // LongBench-E: {task}_e files
  int64_t max_length = 15500;
  int64_t limit = -1;      // first N records of each task; < 0: all
};

struct Prompt {
  std::string task;
  Record record;
  std::vector<int64_t> ids;
};

struct PromptSet {
  TaskConfig config;
  std::vector<std::string> tasks;
  std::vector<DataSource> data_sources;  // one per task, for the run's identity
  std::vector<Prompt> prompts;          // task by task, in data order
};

// Reads the config and every task's records and builds the prompts (tokenizing on all cores).
PromptSet build_prompt_set(const PromptSettings& settings, const Gpt2Tokenizer& tok);

// One line per prompt: {"task", "index", "_id", "input_ids"}, written atomically.
void write_prompts_jsonl(const PromptSet& set, const std::string& path);


}  // namespace foxeval::longbench
