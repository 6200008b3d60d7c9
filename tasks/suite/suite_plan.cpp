#include "tasks/suite/suite_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <set>

#include "data/errors.h"
#include "tasks/task_def.h"

namespace fs = std::filesystem;

namespace foxeval::suite {
namespace {

// Labels and names become folder and file names: letters, digits, '.', '_' and '-' only.
bool plain_name(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

void refuse_unknown_keys(const SuiteText& t, const nlohmann::json& obj, const std::string& pointer,
                         const std::set<std::string>& known, const std::string& what) {
  for (const auto& [k, _] : obj.items())
    if (!known.count(k))
      throw Error(t.source.at(pointer + "/" + k,
                              fmt::format("'{}' is not a field of {} (its fields: {})", k, what, fmt::join(known, ", "))));
}

std::string text_field(const SuiteText& t, const nlohmann::json& obj, const std::string& pointer, const std::string& key,
                       const std::string& fallback) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  if (!obj[key].is_string()) throw Error(t.source.at(pointer + "/" + key, fmt::format("{}: expected a text", key)));
  return obj[key].get<std::string>();
}

int64_t int_field(const SuiteText& t, const nlohmann::json& obj, const std::string& pointer, const std::string& key,
                  int64_t fallback) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  if (!obj[key].is_number_integer() || obj[key].get<int64_t>() < 0)
    throw Error(t.source.at(pointer + "/" + key, fmt::format("{}: expected an integer >= 0", key)));
  return obj[key].get<int64_t>();
}

}  // namespace

SuitePlan make_plan(const SuiteText& t, const PlanOverrides& o) {
  SuitePlan plan;
  const nlohmann::json& v = t.value;
  plan.file = t.source.file;
  plan.settings = v;
  const std::string base = fs::path(t.source.file).parent_path().string();
  refuse_unknown_keys(t, v, "", {"name", "vars", "device", "dtype", "cap", "log-pruning-tolerance", "models", "tasks"},
                      "a suite");
  plan.title = text_field(t, v, "", "name", fs::path(t.source.file).stem().string());
  plan.device = o.device.empty() ? text_field(t, v, "", "device", "auto") : o.device;
  plan.dtype = o.dtype.empty() ? text_field(t, v, "", "dtype", "auto") : o.dtype;
  plan.cap = o.cap >= 0 ? o.cap : int_field(t, v, "", "cap", 0);
  plan.log_pruning_tolerance = text_field(t, v, "", "log-pruning-tolerance", "");

  std::set<std::string> labels;
  if (!o.models.empty()) {
    for (const auto& [label, path] : o.models) {
      if (!plain_name(label))
        throw Error(fmt::format("--model {}={}: a label is letters, digits, '.', '_' and '-'", label, path));
      if (!labels.insert(label).second) throw Error(fmt::format("--model: the label '{}' is given twice", label));
      plan.models.push_back({label, path, "--model " + label});
    }
  } else {
    if (!v.contains("models") || !v["models"].is_array() || v["models"].empty())
      throw Error(t.source.at("/models", "models: a list of {label, path} (or {label, repo}), or give --model LABEL=PATH"));
    for (size_t i = 0; i < v["models"].size(); ++i) {
      const std::string p = "/models/" + std::to_string(i);
      const nlohmann::json& m = v["models"][i];
      if (!m.is_object()) throw Error(t.source.at(p, fmt::format("models[{}]: a mapping {{label, path}} or {{label, repo}}", i)));
      refuse_unknown_keys(t, m, p, {"label", "path", "repo"}, "a model");
      const std::string path = text_field(t, m, p, "path", ""), repo = text_field(t, m, p, "repo", "");
      if (path.empty() == repo.empty()) throw Error(t.source.at(p, fmt::format("models[{}]: give one of path and repo", i)));
      const std::string model = repo.empty() ? (fs::path(path).is_absolute() ? path : (fs::path(base) / path).lexically_normal().string()) : repo;
      // A folder that is not there stops the suite here, at its line (not later as an unknown repo id).
      if (repo.empty() && !fs::is_directory(model))
        throw Error(t.source.at(p + "/path", fmt::format("models[{}].path: {} is not a folder (a checkpoint folder; a "
                                                          "comment beside it may say how it is made)", i, model)));
      std::string label = text_field(t, m, p, "label", "");
      if (label.empty()) label = fs::path(model).filename().string();
      if (!plain_name(label))
        throw Error(t.source.at(p + "/label", fmt::format("models[{}].label '{}': letters, digits, '.', '_' and '-' only", i, label)));
      if (!labels.insert(label).second) throw Error(t.source.at(p + "/label", fmt::format("the label '{}' is given twice", label)));
      plan.models.push_back({label, model, t.source.at(p, fmt::format("models[{}]", i))});
      if (repo.empty()) plan.inputs.push_back({t.source.at(p + "/path", fmt::format("models[{}].path", i)), model});
    }
  }
  for (const auto& [label, path] : o.models) plan.inputs.push_back({"--model " + label, path});

  if (!v.contains("tasks") || !v["tasks"].is_array() || v["tasks"].empty())
    throw Error(t.source.at("/tasks", "tasks: a list of {task: NAME, ...its settings}"));
  std::set<std::string> names;
  for (size_t i = 0; i < v["tasks"].size(); ++i) {
    const std::string p = "/tasks/" + std::to_string(i);
    const nlohmann::json& e = v["tasks"][i];
    if (!e.is_object() || !e.contains("task") || !e["task"].is_string())
      throw Error(t.source.at(p, fmt::format("tasks[{}]: a mapping with task: NAME (one of {})", i, fmt::join(suite_task_names(), ", "))));
    const std::string task = e["task"].get<std::string>();
    const TaskDef* def = find_task(task);
    if (!def || !def->suite_entry)
      throw Error(t.source.at(p + "/task", fmt::format("tasks[{}].task '{}' is not a suite task (known: {})", i, task,
                                                        fmt::join(suite_task_names(), ", "))));
    const std::string name = text_field(t, e, p, "name", task);
    if (!plain_name(name))
      throw Error(t.source.at(p + "/name", fmt::format("tasks[{}].name '{}': letters, digits, '.', '_' and '-' only", i, name)));
    if (!names.insert(name).second)
      throw Error(t.source.at(p, fmt::format("tasks[{}]: a second output named '{}' (give the entries different name:s)", i, name)));
    std::vector<std::string> only;
    if (e.contains("models")) {
      const nlohmann::json& ms = e["models"];
      if (!ms.is_array() || ms.empty())
        throw Error(t.source.at(p + "/models", fmt::format("tasks[{}].models: a list of model labels", i)));
      for (const auto& l : ms) {
        if (!l.is_string() || !labels.count(l.get<std::string>()))
          throw Error(t.source.at(p + "/models", fmt::format("tasks[{}].models: {} is not a model's label (labels: {})", i,
                                                             l.dump(), fmt::join(labels, ", "))));
        only.push_back(l.get<std::string>());
      }
    }
    TaskSettings settings(e, p, &t.source, base);
    SuiteEntry entry{task, name, only, def->suite_entry(settings, plan.cap), e, settings.paths()};
    settings.finish();
    entry.prepared.inputs = settings.inputs();
    for (const NamedPath& in : settings.inputs()) plan.inputs.push_back(in);
    plan.tasks.push_back(std::move(entry));
  }
  return plan;
}

}  // namespace foxeval::suite
