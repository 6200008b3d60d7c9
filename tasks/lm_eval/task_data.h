// Where a task's documents are read from: `--data hf` (also the default) looks in the local
// Hugging Face caches under each of the task's dataset ids (tasks.json hf_ids), never downloading;
// `--data DIR` reads DIR/{task}.jsonl, DIR/{task}.parquet or DIR/{task}/ written by save_to_disk,
// or DIR itself when it is a save_to_disk folder (one task).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tasks/lm_eval/task_config.h"

namespace foxeval::lm_eval {

struct TaskData {
  std::vector<std::string> files;  // in shard order
  std::string description;         // for messages: the file, or "ID (config, split) in the ... cache: FOLDER"
  nlohmann::json identity;         // what the result identity records: file/files, digest, source
  int64_t expected_rows = -1;      // what the cache's metadata says the split holds; -1: unknown
};

// `data`: "hf" (the caches) or a folder.
TaskData locate_task_data(const TaskConfig& config, const std::string& data);

// `--data DIR` given for several tasks while DIR itself is one save_to_disk dataset: refused.
void check_data_for_tasks(const std::string& data, size_t task_count);

// The one command that puts the task's split into the datasets cache on a machine with network.
std::string fetch_command(const TaskConfig& config);

}  // namespace foxeval::lm_eval
