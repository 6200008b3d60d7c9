// How a task reads its `foxeval suite` entry and runs it: the reader (EntryReader) is a field of the
// task's definition (TaskDef::suite_entry, tasks/task_def.h), registered with it by its one line;
// `foxeval suite` looks a task up in that registry and keeps no list of its own.
//
//   // tasks/niah/niah_task_def.cpp
//   suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
//     niah::RunSettings s;                       // the task command's settings, read from the entry
//     s.haystack_dir = t.required_path("haystack");
//     ...
//     return suite::prepared([s](const suite::TaskContext& c) mutable { c.fill(s); niah::run_sweep(s); });
//   }
//
// A suite entry's keys are the task command's flags without "--" (`max-new-tokens: 24`), read
// into the same settings struct the command fills, so OUT/{label}/{name}.json is what the command
// writes with those flags (tests/cli_suite_test.sh holds them equal).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "data/path_overlap.h"
#include "models/model.h"
#include "models/registry.h"
#include "tasks/suite/suite_file.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::suite {

// One task entry's settings as its task reads them. Every reader names the file, line and field
// in its errors; finish() refuses the keys no reader took (a misspelled flag must not run as the default).
class TaskSettings {
 public:
  // `entry`: the task's mapping; `pointer`: where it is ("/tasks/2"); `base_dir`: the suite file's folder.
  TaskSettings(nlohmann::json entry, std::string pointer, const SourceLines* source, std::string base_dir);

  bool has(const std::string& key) const;
  std::string text(const std::string& key, const std::string& fallback);
  std::string required_text(const std::string& key);
  // A path relative to the suite file's folder ("" when absent); recorded as an input.
  std::string path(const std::string& key);
  std::string required_path(const std::string& key);
  // A path, or `word` as it is (lm-eval's --data hf).
  std::string path_or(const std::string& key, const std::string& word, const std::string& fallback);
  int64_t integer(const std::string& key, int64_t fallback, int64_t min = std::numeric_limits<int64_t>::min(),
                  int64_t max = std::numeric_limits<int64_t>::max());
  double number(const std::string& key, double fallback, double min = -1e300, double max = 1e300);
  bool flag(const std::string& key, bool fallback);
  // A list ([1, 2]) or the flag's text ("1,2"); empty when absent.
  std::vector<int64_t> integers(const std::string& key);
  std::vector<std::string> texts(const std::string& key);
  // The list joined with ',' as the command's flag takes it ("" when absent).
  std::string joined(const std::string& key);

  // "FILE:LINE: tasks[2].KEY" for messages; fail() throws Error with it and `what`.
  std::string where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  void finish() const;

  const std::vector<NamedPath>& inputs() const { return inputs_; }
  // The keys read as paths, each with its resolved path (the suite's resume check compares them by content).
  const std::map<std::string, std::string>& paths() const { return paths_; }

 private:
  const nlohmann::json* get(const std::string& key);
  nlohmann::json entry_;
  std::string pointer_, base_dir_;
  const SourceLines* source_;
  std::set<std::string> read_;
  std::vector<NamedPath> inputs_;
  std::map<std::string, std::string> paths_;
};

// What a prepared task runs with, given by the suite at run time.
struct TaskContext {
  std::string label;      // the model's label
  std::string model_dir;  // what the command's --model would get (a folder or a repo id)
  std::shared_ptr<const LoadedModel> model;  // loaded once by the suite for all its tasks
  RunOptions run;         // device, dtype (resolved), pruning tolerance
  std::string out_path;   // OUT/{label}/{name}.json, or the folder OUT/{label}/{name} (PreparedTask::out)
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  int64_t stop_after = -1;  // >= 0: stop (exit 3, resumable) after this many items: the kill test's hook

  // Gives a task command's settings what every task takes from the suite under the command's names
  // (model_dir, model, run, out_path, resume, num_shards, shard_index, ranks); the rest is the task's.
  template <class Settings>
  void fill(Settings& s) const {
    s.model_dir = model_dir, s.model = model, s.run = run, s.out_path = out_path;
    fill_run(s);
  }
  // The run machinery's part alone (resume, shards, ranks), for a task whose model or output
  // settings have other names (longbench's out_dir, ruler's samples.model_dir): one place, so a
  // field added here reaches every task (a hand copy once lost the distributed run's ranks).
  template <class Settings>
  void fill_run(Settings& s) const {
    s.resume = resume, s.num_shards = num_shards, s.shard_index = shard_index, s.ranks = ranks;
  }
};

struct PreparedTask {
  // The output beside OUT/{label}/{name}: ".json" (a file), or "" (a folder, as longbench's --out).
  std::string out_suffix = ".json";
  // Inside a folder output: the result file tables and checks read ("run.json"); "" for a file output.
  std::string result_in_folder;
  std::function<void(const TaskContext&)> run;
  std::vector<NamedPath> inputs;  // filled by the suite from TaskSettings::inputs()
};

// Reads an entry's settings (throwing on a bad one, before any model loads) and returns the run.
// `cap` > 0: the suite's cap on documents/records/cells (each task applies it to what it counts).
using EntryReader = std::function<PreparedTask(TaskSettings& settings, int64_t cap)>;

// A file output's task: `run`, with the defaults above.
PreparedTask prepared(std::function<void(const TaskContext&)> run);

}  // namespace foxeval::suite
