// `foxeval info --model DIR`: family, the config that matters, parameter count. `--tasks`: the
// registered task definitions (tasks/task_def.h); `--ci-baselines`: the end-to-end runs CI holds
// against results/baseline/, one a line for scripts/e2e_tasks.sh; `--switches`: every FOXEVAL_*
// environment switch (data/switches.h), its value here, and whether it changes the numbers.
#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"
#include "data/content_digest.h"
#include "data/hub_cache.h"
#include "data/switches.h"
#include "models/registry.h"
#include "tasks/task_def.h"

namespace foxeval {
namespace {

// Each task: its mode, directions, tolerances, the keys and flags that are not numbers, baselines.
void print_tasks(bool json) {
  const nlohmann::json tasks = task_defs_json();
  if (json) {
    std::printf("%s\n", tasks.dump(2).c_str());
    return;
  }
  for (const nlohmann::json& t : tasks) {
    std::printf("%s\n  mode         %s%s%s\n", t["name"].get<std::string>().c_str(), t["mode"].get<std::string>().c_str(),
                t["tables"].get<bool>() ? ", tables" : "", t["suite"].get<bool>() ? ", suite" : "");
    for (const char* key : {"directions", "tolerances", "path_keys", "information_flags", "paper_settings"})
      if (t.contains(key) && !t[key].empty()) std::printf("  %-12s %s\n", key, t[key].dump().c_str());
    if (t.contains("baselines"))
      for (const nlohmann::json& b : t["baselines"])
        std::printf("  baseline     results/baseline/%s\n", b["baseline"].get<std::string>().c_str());
  }
}

// One line a baseline: BASELINE, RESULT (relative to the run's folder), then the arguments after
// `foxeval`, tab-separated, with {out}, {shared} and {trained} for the script to fill in.
void print_ci_baselines() {
  for (const TaskDef* d : task_defs())
    for (const CiBaseline& b : d->baselines) {
      std::string line = b.baseline + "\t" + b.result;
      for (const std::string& a : b.args) line += "\t" + a;
      std::printf("%s\n", line.c_str());
    }
}

void print_switches(bool json) {
  const std::map<std::string, std::string> set = nondefault_switches();
  nlohmann::json all = nlohmann::json::array();
  for (const Switch& s : switches()) {
    const auto it = set.find(s.name);
    all.push_back({{"name", s.name},
                   {"kind", s.kind == SwitchKind::OnOff ? "on unless 0" : "value"},
                   {"numerics", s.numerics},
                   {"meaning", s.meaning},
                   {"value", it == set.end() ? nlohmann::json() : nlohmann::json(it->second)}});
  }
  if (json) {
    std::printf("%s\n", all.dump(2).c_str());
    return;
  }
  std::printf("%-26s %-8s %-9s %s\n", "switch", "numerics", "here", "meaning");
  for (const nlohmann::json& s : all)
    std::printf("%-26s %-8s %-9s %s\n", s["name"].get<std::string>().c_str(), s["numerics"].get<bool>() ? "yes" : "no",
                s["value"].is_null() ? "default" : s["value"].get<std::string>().c_str(),
                s["meaning"].get<std::string>().c_str());
}

CommandRegistrar info_command([](CLI::App& root) {
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto tasks = std::make_shared<bool>(false);
  auto baselines = std::make_shared<bool>(false);
  auto switch_list = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand(
      "info", "Describe a checkpoint (loads and checks every tensor); or the tasks, CI baselines, switches");
  auto* model = cmd->add_option("--model", *dir, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache");
  auto* tasks_flag = cmd->add_flag("--tasks", *tasks, "the registered tasks' definitions (tasks/task_def.h)");
  auto* baselines_flag = cmd->add_flag("--ci-baselines", *baselines,
                                       "the end-to-end runs CI checks against results/baseline/, one a line, tab-separated");
  auto* switches_flag = cmd->add_flag("--switches", *switch_list,
                                      "every FOXEVAL_* environment switch: meaning, value here, whether it changes numbers");
  model->excludes(tasks_flag)->excludes(baselines_flag)->excludes(switches_flag);
  tasks_flag->excludes(baselines_flag)->excludes(switches_flag);
  baselines_flag->excludes(switches_flag);
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([cmd, dir, json, tasks, baselines, switch_list] {
    if (*tasks) return print_tasks(*json);
    if (*baselines) return print_ci_baselines();
    if (*switch_list) return print_switches(*json);
    if (cmd->get_option("--model")->count() == 0)
      throw CLI::RequiredError("--model, --tasks, --ci-baselines or --switches");
    const LoadedModel model = load_model(*dir, RunOptions{});
    const ModelInfo& i = model->info();
    const ModelDigest& d = model.digest;  // taken while it loaded
    if (*json) {
      nlohmann::json j = {{"directory", i.directory}, {"model_type", i.model_type}, {"family", i.family},
                          {"hidden_size", i.hidden_size}, {"num_layers", i.num_layers},
                          {"vocab_size", i.vocab_size}, {"num_parameters", i.num_parameters}};
      for (const auto& [k, v] : i.settings) j["settings"][k] = v;
      j["digest"] = d.digest;
      j["digest_source"] = d.source;
      for (const auto& [name, hex] : d.files) j["files"][name] = "sha256:" + hex;
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf("%s\n", fmt::format("{}\n  family       {}\n  model_type   {}\n  parameters   {} ({:.1f}M)\n"
                                    "  hidden_size  {}\n  layers       {}\n  vocab_size   {}",
                                    i.directory, i.family, i.model_type, i.num_parameters, i.num_parameters / 1e6,
                                    i.hidden_size, i.num_layers, i.vocab_size)
                            .c_str());
    for (const auto& [k, v] : i.settings) std::printf("  %-12s %s\n", k.c_str(), v.c_str());
    std::printf("  digest       %s (%s)\n", d.digest.c_str(), d.source.c_str());
  });
});

}  // namespace
}  // namespace foxeval
