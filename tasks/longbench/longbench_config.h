// LongBench's task definition: per task a prompt template and a generation length, read from the
// official dataset2prompt.json / dataset2maxlen.json pair (tasks/longbench/config/, or a user's own
// pair with --config), and the task lists the paper's pred.py runs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace foxeval::longbench {

struct TaskConfig {
  std::map<std::string, std::string> prompt;  // task -> template (Python str.format fields)
  std::map<std::string, int64_t> maxlen;      // task -> max new tokens
  std::string dir;                            // where the pair was read from (for messages)
};

// The bundled config folder: $FOXEVAL_LONGBENCH_CONFIG, else <source>/tasks/longbench/config
// (compile-time), else <dir of the executable>/../tasks/longbench/config; the first that holds both
// files. Throws foxeval::Error listing the places tried.
std::string bundled_config_dir();

// Reads DIR/dataset2prompt.json and DIR/dataset2maxlen.json. Errors name the file and the task:
// a template that is not a string, a length that is not a positive integer, a task in one file only.
TaskConfig load_task_config(const std::string& dir);

// pred.py's task lists: the paper's 14 English tasks, and the 11 of them LongBench-E has (--e).
const std::vector<std::string>& english_tasks();
const std::vector<std::string>& english_tasks_e();

// A task name becomes a file name ({task}.jsonl under --data and --out): only names of LongBench's
// shape pass (letters, digits, '_', '-', and '.' not first; at most 100 characters), so neither a
// config of the user's nor a result file can steer a read or a write elsewhere. foxeval::Error otherwise.
void check_task_name(const std::string& task);

// LongBench's 21 tasks in its order (LongBench-E: its 13).
const std::vector<std::string>& all_tasks(bool e);

// The tasks to run: `named` (comma-separated, as given; "all": all_tasks) or the default list; every
// task must be in the config (the error lists the known ones).
std::vector<std::string> select_tasks(const TaskConfig& config, const std::string& named, bool e);

}  // namespace foxeval::longbench
