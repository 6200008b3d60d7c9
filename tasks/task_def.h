// One definition per task: everything the generic commands need to know about a task, registered
// by one line in the task's own folder:
//
//   const TaskRegistrar registered(mytask::definition);   // in tasks/mytask/mytask_task_def.cpp
//
// where `TaskDef definition()` fills the fields below. The generic code reads nothing else:
//   table, report      the result kind (`tables`)                       tasks/results_table, report
//   merge              the record builder or the reducer                tasks/result_file
//   check, compare,    metric directions and default tolerances         tasks/metric_direction, check
//   table's ranking
//   identity, check    identity keys that are paths (information only)  tasks/identity
//   the announcement   flags that change no number                      cli/run_options
//   info --tasks       all of it, with the paper's settings' file
//   CI baselines       the end-to-end command per baseline              info --ci-baselines, scripts/e2e_tasks.sh
//
// The line may stand in the static tasks library: the build links the task layer whole
// (CMakeLists.txt, WHOLE_ARCHIVE), so a registrar is never dropped for want of a caller.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tasks/metric_direction.h"
#include "tasks/result_file.h"
#include "tasks/result_kind.h"

namespace foxeval {

// A metric pattern ('*' any characters, matched against the metric's path as `check` names it;
// per_item/METRIC/values goes as METRIC) and which way is better. First match wins.
struct MetricRule {
  std::string pattern;
  Direction direction = Direction::None;
};

// The default tolerance of the metrics matching `pattern`: |now - baseline| <= absolute +
// relative * |baseline|. First match wins; a metric no rule matches has 0 (exactly equal).
struct MetricTolerance {
  std::string pattern;
  double absolute = 0, relative = 0;
};

// One end-to-end run CI holds against a committed baseline (results/baseline/BASELINE). `args`
// follow `foxeval`; the scripts add `--device cpu --dtype float32` and replace {out} (the run's
// scratch folder), {shared} (the shared folder beside the checkout) and {trained} (its small
// trained FoX (Pro)). `result`: the file the run writes, relative to {out}.
struct CiBaseline {
  std::string baseline, result;
  std::vector<std::string> args;
};

struct TaskDef {
  std::string name;                          // header.task of its results; names the task in errors
  std::function<results::ResultKind()> tables;  // its tables and report sections (none: not tabulated)
  ResultBuilder build;                       // record mode: the result from every record (merge)
  std::optional<Reducer> reducer;            // reducer mode: its exact aggregate (merge)
  std::vector<MetricRule> directions;
  std::vector<MetricTolerance> tolerances;
  std::vector<std::string> path_keys;          // identity keys that say where things are, not what
  std::vector<std::string> information_flags;  // its command-line flags that change no number
  std::string paper_settings;                  // task_data file holding its "paper_settings" ("" none)
  std::vector<CiBaseline> baselines;
};

// Adds a task (a second definition of one name replaces the first, as tests re-register). Also
// registers its result kind and its builder or reducer with their registries. Throws
// foxeval::Error for a definition without a name, or with both or neither of build and reducer.
void register_task(TaskDef def);

struct TaskRegistrar {
  explicit TaskRegistrar(TaskDef (*make)()) { register_task(make()); }
};

// The registered tasks by name.
std::vector<const TaskDef*> task_defs();
const TaskDef* find_task(const std::string& name);  // nullptr: none

// The task's direction of `metric` (a path as check names it, per_item prefixes stripped); for a
// task not registered (or ""), the first rule of any task, tasks in name order: a result without
// a header still ranks. None when nothing matches.
Direction task_metric_direction(const std::string& task, const std::string& metric);
// The task's default tolerance of `metric` ({absolute, relative}; an unknown task: any task's
// rule, as above); nullopt when no rule matches.
std::optional<std::pair<double, double>> task_metric_tolerance(const std::string& task, const std::string& metric);

// What `foxeval info --tasks` shows: per task its mode, table, rules, keys, flags, paper settings
// file and baselines (JSON, tasks by name).
nlohmann::json task_defs_json();

// Every task's path_keys, and every task's information_flags, each sorted without repeats.
std::vector<std::string> task_path_keys();
std::vector<std::string> task_information_flags();

}  // namespace foxeval
