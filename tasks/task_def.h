// One definition per task: everything the generic commands need to know about a task, registered
// by one statement in the task's own folder (tasks/mytask/mytask_task_def.cpp):
//
//   const TaskRegistrar registered(TaskDef::records("mytask", table_kind, build_result)
//                                      .with_directions({{"score", Direction::Higher}})
//                                      .with_suite_entry(read_suite_entry));
//
// The generic code reads nothing else:
//   table, report      the result kind (`tables`)                       tasks/results/results_table, report
//   merge              the record builder or the reducer                tasks/run/result_file
//   check, compare,    metric directions and default tolerances         tasks/results/metric_direction, check
//   table's ranking
//   identity, check    identity keys that are paths (information only)  tasks/run/identity
//   the announcement   flags that change no number                      cli/run_options
//   suite run          how a suite entry reads its settings and runs    tasks/suite
//   info --tasks       all of it, with the paper's settings' file
//   CI baselines       the end-to-end command per baseline              info --ci-baselines, scripts/e2e_tasks.sh
//
// The statement may stand in the static tasks library: the build links the task layer whole
// (CMakeLists.txt, WHOLE_ARCHIVE), so a registrar is never dropped for want of a caller.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tasks/results/metric_direction.h"
#include "tasks/run/result_file.h"
#include "tasks/result_kind.h"
#include "tasks/suite/suite_entry.h"

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
  suite::EntryReader suite_entry;              // how a `foxeval suite` entry runs it (none: not a suite task)

  // The registration's one statement: a task whose merge rebuilds the result from its records, or
  // one whose merge adds exact aggregates; the rest chained on (each sets its field above).
  static TaskDef records(std::string name, std::function<results::ResultKind()> tables, ResultBuilder build);
  static TaskDef reduced(std::string name, std::function<results::ResultKind()> tables, Reducer reducer);
  TaskDef& with_directions(std::vector<MetricRule> v) { return directions = std::move(v), *this; }
  TaskDef& with_tolerances(std::vector<MetricTolerance> v) { return tolerances = std::move(v), *this; }
  TaskDef& with_path_keys(std::vector<std::string> v) { return path_keys = std::move(v), *this; }
  TaskDef& with_information_flags(std::vector<std::string> v) { return information_flags = std::move(v), *this; }
  TaskDef& with_paper_settings(std::string file) { return paper_settings = std::move(file), *this; }
  TaskDef& with_baselines(std::vector<CiBaseline> v) { return baselines = std::move(v), *this; }
  TaskDef& with_suite_entry(suite::EntryReader r) { return suite_entry = std::move(r), *this; }
};

// Adds a task (a second definition of one name replaces the first, as tests re-register). Also
// registers its result kind and its builder or reducer with their registries. Throws
// foxeval::Error for a definition without a name, or with both or neither of build and reducer.
void register_task(TaskDef def);

struct TaskRegistrar {
  explicit TaskRegistrar(TaskDef def) { register_task(std::move(def)); }
};

// The registered tasks by name.
std::vector<const TaskDef*> task_defs();
// The names of the tasks a suite can run (those with a suite_entry), by name.
std::vector<std::string> suite_task_names();
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
