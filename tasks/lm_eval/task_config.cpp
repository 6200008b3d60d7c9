#include "tasks/lm_eval/task_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/resources.h"
#include "tasks/lm_eval/docs.h"

namespace foxeval::lm_eval {
namespace fs = std::filesystem;

std::string tasks_json_path() {
  return find_resource({"lm-eval task definitions", "tasks/lm_eval/tasks.json", {}, "FOXEVAL_TASKS_DIR", "lm_eval/tasks.json"});
}

namespace {

std::map<std::string, TaskConfig> load_configs() {
  const std::string path = tasks_json_path();
  const nlohmann::json j = read_json(path);
  std::map<std::string, TaskConfig> out;
  try {
    for (auto it = j.at("tasks").begin(); it != j.at("tasks").end(); ++it) {
      const nlohmann::json& t = it.value();
      TaskConfig c;
      c.name = it.key();
      c.yaml = t.at("yaml").get<std::string>();
      c.dataset_path = t.at("dataset_path").get<std::string>();
      c.dataset_name = t.at("dataset_name").is_null() ? "" : t.at("dataset_name").get<std::string>();
      c.split = t.at("split").get<std::string>();
      for (const nlohmann::json& h : t.at("hf_ids"))
        c.hf_ids.push_back({h.at("dataset_path").get<std::string>(),
                            h.at("dataset_name").is_null() ? "" : h.at("dataset_name").get<std::string>(),
                            h.at("from").get<std::string>()});
      if (c.hf_ids.empty()) throw Error(fmt::format("{}: task '{}' has no hf_ids", path, c.name));
      c.output_type = t.at("output_type").get<std::string>();
      c.target_delimiter = t.at("target_delimiter").get<std::string>();
      c.version = t.at("version").get<double>();
      for (const nlohmann::json& m : t.at("metrics"))
        c.metrics.push_back({m.at("metric").get<std::string>(), m.at("aggregation").get<std::string>(),
                             m.at("higher_is_better").get<bool>()});
      if (!doc_function(c.name)) throw Error(fmt::format("{}: task '{}' has no document function in foxeval", path, c.name));
      out.emplace(c.name, std::move(c));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: malformed task definitions: {}", path, e.what()));
  }
  return out;
}

}  // namespace

const std::map<std::string, TaskConfig>& task_configs() {
  static const std::map<std::string, TaskConfig> configs = load_configs();
  return configs;
}

namespace {

// tasks.json's "groups": name -> lm-eval's member tasks (or the paper's, for "all").
std::map<std::string, std::vector<std::string>> load_groups() {
  const std::string path = tasks_json_path();
  const nlohmann::json j = read_json(path);
  std::map<std::string, std::vector<std::string>> out;
  if (!j.contains("groups")) return out;
  try {
    for (auto it = j.at("groups").begin(); it != j.at("groups").end(); ++it)
      if (it.key() != "note") out[it.key()] = it.value().at("tasks").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: malformed task groups: {}", path, e.what()));
  }
  return out;
}

const std::map<std::string, std::vector<std::string>>& task_groups() {
  static const std::map<std::string, std::vector<std::string>> groups = load_groups();
  return groups;
}

// A name of --tasks: one task, or a group's tasks when foxeval runs every member.
std::vector<std::string> expand_task_name(const std::string& name) {
  const auto& groups = task_groups();
  auto g = groups.find(name);
  if (g == groups.end() || task_configs().count(name)) return {name};
  std::vector<std::string> have, lack;
  for (const std::string& t : g->second) (task_configs().count(t) ? have : lack).push_back(t);
  if (!lack.empty())
    throw Error(fmt::format("--tasks: lm-eval's '{}' also holds {}, which foxeval does not run (not a task of the "
                            "paper); name the tasks instead: --tasks {}",
                            name, fmt::join(lack, ", "), have.empty() ? std::string("...") : fmt::format("{}", fmt::join(have, ","))));
  return g->second;
}

}  // namespace

const TaskConfig& task_config(const std::string& name) {
  const auto& all = task_configs();
  auto it = all.find(name);
  if (it == all.end()) {
    std::vector<std::string> names;
    for (const auto& [n, c] : all) names.push_back(n);
    std::vector<std::string> groups;
    for (const auto& [g, members] : task_groups()) groups.push_back(g);
    throw Error(fmt::format("--tasks: unknown task '{}' (known: {}; groups: {})", name, fmt::join(names, ", "), fmt::join(groups, ", ")));
  }
  return it->second;
}

std::vector<TaskConfig> parse_task_list(const std::string& list) {
  std::vector<TaskConfig> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(start, end - start);
    if (name.empty()) throw Error(fmt::format("--tasks: empty task name in '{}'", list));
    for (const std::string& task : expand_task_name(name)) {
      if (!seen.insert(task).second)
        throw Error(fmt::format("--tasks: task '{}' given twice{}", task, task == name ? "" : fmt::format(" (also in '{}')", name)));
      out.push_back(task_config(task));
    }
    start = end + 1;
  }
  return out;
}

}  // namespace foxeval::lm_eval
