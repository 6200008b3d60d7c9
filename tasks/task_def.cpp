#include "tasks/task_def.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "data/errors.h"

namespace foxeval {
namespace {

// By name, so that the order (and the "any task's rule" fallback) does not depend on the order
// static objects of different files happen to be constructed in.
std::map<std::string, TaskDef>& registry() {
  static std::map<std::string, TaskDef> defs;
  return defs;
}

// The task's own definition first; then, for a task not registered, every task's in name order.
std::vector<const TaskDef*> lookup_order(const std::string& task) {
  if (const TaskDef* d = find_task(task)) return {d};
  return task_defs();
}

}  // namespace

TaskDef TaskDef::records(std::string name, std::function<results::ResultKind()> tables, ResultBuilder build) {
  TaskDef d;
  d.name = std::move(name), d.tables = std::move(tables), d.build = std::move(build);
  return d;
}

TaskDef TaskDef::reduced(std::string name, std::function<results::ResultKind()> tables, Reducer reducer) {
  TaskDef d;
  d.name = std::move(name), d.tables = std::move(tables), d.reducer = std::move(reducer);
  return d;
}

void register_task(TaskDef def) {
  if (def.name.empty()) throw Error("internal: a task definition needs a name");
  if (static_cast<bool>(def.build) == def.reducer.has_value())
    throw Error(fmt::format("internal: task '{}' needs exactly one of a record builder and a reducer", def.name));
  if (def.tables) {
    results::ResultKind kind = def.tables();
    if (kind.task != def.name)
      throw Error(fmt::format("internal: task '{}' registers the result kind of '{}'", def.name, kind.task));
    results::register_kind(std::move(kind));
  }
  if (def.build)
    ResultBuilderRegistrar(def.name, def.build);
  else
    ReducerRegistrar(def.name, *def.reducer);
  const std::string name = def.name;
  registry()[name] = std::move(def);
}

std::vector<const TaskDef*> task_defs() {
  std::vector<const TaskDef*> out;
  for (const auto& [name, def] : registry()) out.push_back(&def);
  return out;
}

std::vector<std::string> suite_task_names() {
  std::vector<std::string> out;
  for (const auto& [name, def] : registry())
    if (def.suite_entry) out.push_back(name);
  return out;
}

const TaskDef* find_task(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

Direction task_metric_direction(const std::string& task, const std::string& metric) {
  for (const TaskDef* d : lookup_order(task))
    for (const MetricRule& r : d->directions)
      if (glob_match(r.pattern, metric)) return r.direction;
  return Direction::None;
}

std::optional<std::pair<double, double>> task_metric_tolerance(const std::string& task, const std::string& metric) {
  for (const TaskDef* d : lookup_order(task))
    for (const MetricTolerance& t : d->tolerances)
      if (glob_match(t.pattern, metric)) return std::make_pair(t.absolute, t.relative);
  return std::nullopt;
}

nlohmann::json task_defs_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const TaskDef* d : task_defs()) {
    nlohmann::json t = {{"name", d->name}, {"mode", d->build ? "records" : "reducer"}};
    t["tables"] = static_cast<bool>(d->tables);
    t["suite"] = static_cast<bool>(d->suite_entry);
    for (const MetricRule& r : d->directions) t["directions"].push_back({r.pattern, direction_name(r.direction)});
    for (const MetricTolerance& m : d->tolerances)
      t["tolerances"].push_back({{"metric", m.pattern}, {"absolute", m.absolute}, {"relative", m.relative}});
    t["path_keys"] = d->path_keys;
    t["information_flags"] = d->information_flags;
    if (!d->paper_settings.empty()) t["paper_settings"] = d->paper_settings;
    for (const CiBaseline& b : d->baselines)
      t["baselines"].push_back({{"baseline", b.baseline}, {"result", b.result}, {"args", b.args}});
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> task_path_keys() {
  std::set<std::string> keys;
  for (const TaskDef* d : task_defs()) keys.insert(d->path_keys.begin(), d->path_keys.end());
  return {keys.begin(), keys.end()};
}

std::vector<std::string> task_information_flags() {
  std::set<std::string> flags;
  for (const TaskDef* d : task_defs()) flags.insert(d->information_flags.begin(), d->information_flags.end());
  return {flags.begin(), flags.end()};
}

}  // namespace foxeval
