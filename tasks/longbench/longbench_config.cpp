#include "tasks/longbench/longbench_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "data/errors.h"
#include "data/resources.h"
#include "data/json_file.h"

namespace fs = std::filesystem;

namespace foxeval::longbench {
namespace {

constexpr const char* kPromptFile = "dataset2prompt.json";
constexpr const char* kMaxlenFile = "dataset2maxlen.json";

std::string known_tasks(const TaskConfig& config) {
  std::string s;
  for (const auto& [task, _] : config.prompt) s += (s.empty() ? "" : ", ") + task;
  return s;
}

}  // namespace

std::string bundled_config_dir() {
  return find_resource({"the bundled LongBench config (or pass --config DIR)", "tasks/longbench/config",
                        {kPromptFile, kMaxlenFile}, "FOXEVAL_LONGBENCH_CONFIG", ""});
}

TaskConfig load_task_config(const std::string& dir) {
  TaskConfig config;
  config.dir = dir;
  const std::string prompt_path = (fs::path(dir) / kPromptFile).string();
  const std::string maxlen_path = (fs::path(dir) / kMaxlenFile).string();
  const nlohmann::json prompts = read_json(prompt_path), maxlens = read_json(maxlen_path);
  if (!prompts.is_object()) throw Error(fmt::format("{}: expected an object of task -> prompt template", prompt_path));
  if (!maxlens.is_object()) throw Error(fmt::format("{}: expected an object of task -> generation length", maxlen_path));
  for (auto it = prompts.begin(); it != prompts.end(); ++it) {
    if (!it.value().is_string())
      throw Error(fmt::format("{}: task '{}': the template must be a string, not {}", prompt_path, it.key(), it.value().dump()));
    config.prompt[it.key()] = it.value().get<std::string>();
  }
  for (auto it = maxlens.begin(); it != maxlens.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 1)
      throw Error(fmt::format("{}: task '{}': the generation length must be a positive integer, not {}", maxlen_path,
                              it.key(), it.value().dump()));
    config.maxlen[it.key()] = it.value().get<int64_t>();
  }
  for (const auto& [task, _] : config.prompt)
    if (!config.maxlen.count(task)) throw Error(fmt::format("{}: task '{}' (in {}) has no generation length", maxlen_path, task, prompt_path));
  for (const auto& [task, _] : config.maxlen)
    if (!config.prompt.count(task)) throw Error(fmt::format("{}: task '{}' (in {}) has no prompt template", prompt_path, task, maxlen_path));
  return config;
}

const std::vector<std::string>& english_tasks() {
  // pred.py / eval.py `datasets` (not --e), in their order.
  static const std::vector<std::string> tasks = {"2wikimqa", "narrativeqa", "qasper",     "multifieldqa_en", "hotpotqa",
                                                 "musique",  "gov_report",  "qmsum",      "multi_news",      "trec",
                                                 "triviaqa", "samsum",      "lcc",        "repobench-p"};
  return tasks;
}

const std::vector<std::string>& english_tasks_e() {
  // pred.py / eval.py `datasets` with --e: LongBench-E has no narrativeqa, musique or qmsum.
  static const std::vector<std::string> tasks = {"qasper",     "multifieldqa_en", "hotpotqa", "2wikimqa",
                                                 "gov_report", "multi_news",      "trec",     "triviaqa",
                                                 "samsum",     "lcc",             "repobench-p"};
  return tasks;
}

void check_task_name(const std::string& task) {
  bool ok = !task.empty() && task.size() <= 100 && task[0] != '.';
  for (char c : task) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok)
    throw Error(fmt::format("task name {} cannot name a file: a LongBench task is letters, digits, '_', '-' or '.' "
                            "(not first), at most 100 characters",
                            nlohmann::json(task).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

const std::vector<std::string>& all_tasks(bool e) {
  // LongBench's 21 tasks in its README's order; LongBench-E's 13 (upstream pred.py's --e list).
  static const std::vector<std::string> tasks = {
      "narrativeqa", "qasper",     "multifieldqa_en", "multifieldqa_zh", "hotpotqa",    "2wikimqa",
      "musique",     "dureader",   "gov_report",      "qmsum",           "multi_news",  "vcsum",
      "trec",        "triviaqa",   "samsum",          "lsht",            "passage_count",
      "passage_retrieval_en",      "passage_retrieval_zh",               "lcc",         "repobench-p"};
  static const std::vector<std::string> tasks_e = {"qasper",   "multifieldqa_en", "hotpotqa",      "2wikimqa",
                                                   "gov_report", "multi_news",    "trec",          "triviaqa",
                                                   "samsum",   "passage_count",   "passage_retrieval_en", "lcc",
                                                   "repobench-p"};
  return e ? tasks_e : tasks;
}

std::vector<std::string> select_tasks(const TaskConfig& config, const std::string& named, bool e) {
  std::vector<std::string> tasks;
  if (named.empty()) {
    tasks = e ? english_tasks_e() : english_tasks();
  } else if (named == "all") {
    tasks = all_tasks(e);
  } else {
    size_t start = 0;
    while (start <= named.size()) {
      const size_t comma = std::min(named.find(',', start), named.size());
      const std::string t = named.substr(start, comma - start);
      if (t.empty()) throw Error(fmt::format("--tasks '{}': an empty task name", named));
      tasks.push_back(t);
      start = comma + 1;
    }
  }
  std::set<std::string> seen;
  for (const std::string& t : tasks) {
    check_task_name(t);
    if (!config.prompt.count(t))
      throw Error(fmt::format("--tasks: '{}' is not a task of the LongBench config in {} (known: {})", t, config.dir,
                              known_tasks(config)));
    if (!seen.insert(t).second) throw Error(fmt::format("--tasks: '{}' is named twice", t));
  }
  return tasks;
}

}  // namespace foxeval::longbench
