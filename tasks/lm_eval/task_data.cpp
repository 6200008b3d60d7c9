#include "tasks/lm_eval/task_data.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/datasets_cache.h"
#include "data/errors.h"
#include "data/hub_cache.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"

namespace foxeval::lm_eval {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string config_text(const std::string& config) { return config.empty() ? "no config" : "config " + config; }

TaskData from_found(const TaskConfig& c, const std::string& repo_id, const HfSplitFiles& f) {
  TaskData t;
  t.files = f.files;
  t.expected_rows = f.num_rows;
  t.description = fmt::format("{} ({}, split {}) in the {}: {}", repo_id, config_text(f.config), c.split, f.kind, f.folder);
  json names = json::array();
  for (const std::string& p : f.files) names.push_back(fs::path(p).filename().string());
  t.identity = {{"source", f.kind}, {"dataset", repo_id}, {"config", f.config}, {"split", c.split},
                {"folder", f.folder}, {"files", names}, {"digest", digest_paths(f.files)}};
  return t;
}

TaskData from_file(const std::string& path) {
  // The folder format's identity, unchanged: journals of earlier runs still resume.
  return {{path}, path, {{"file", fs::path(path).filename().string()}, {"digest", digest_paths({path})}}, -1};
}

TaskData from_caches(const TaskConfig& c) {
  std::vector<std::string> looked;
  for (const HfDatasetId& id : c.hf_ids) {
    const HfSplit want{id.dataset_path, id.dataset_name, c.split};
    if (auto f = find_in_datasets_cache(want, &looked)) return from_found(c, id.dataset_path, *f);
    if (auto f = find_in_hub_cache(want, &looked)) return from_found(c, id.dataset_path, *f);
  }
  std::string places;
  for (const std::string& l : looked) places += "\n  " + l;
  std::string ids;
  for (const HfDatasetId& id : c.hf_ids)
    ids += fmt::format("{}{} ({})", ids.empty() ? "" : ", ", id.dataset_path, config_text(id.dataset_name));
  throw Error(fmt::format(
      "{}: the '{}' split of {} is in no local Hugging Face cache (foxeval never downloads). Looked in:{}\n"
      "Fetch it on a machine with network (into the same cache, or copy the cache here):\n  {}\n"
      "or write a folder for --data DIR with scripts/fetch_lm_eval_data.py",
      c.name, c.split, ids, places, fetch_command(c)));
}

}  // namespace

std::string fetch_command(const TaskConfig& c) {
  const HfDatasetId& id = c.hf_ids.back();  // the id current lm-eval loads: script-free, loads with current datasets
  return fmt::format("python -c \"import datasets; datasets.load_dataset('{}'{}, split='{}')\"", id.dataset_path,
                     id.dataset_name.empty() ? "" : ", '" + id.dataset_name + "'", c.split);
}

void check_data_for_tasks(const std::string& data, size_t task_count) {
  if (data != "hf" && is_saved_dataset(data) && task_count > 1)
    throw Error(fmt::format("--data {}: a save_to_disk folder holds one dataset, but {} tasks were asked for; give a "
                            "folder with one {{task}}/ save_to_disk folder per task",
                            data, task_count));
}

TaskData locate_task_data(const TaskConfig& c, const std::string& data) {
  if (data == "hf") return from_caches(c);
  std::error_code ec;
  if (!fs::is_directory(data, ec)) throw Error(fmt::format("--data {}: not a folder (nor 'hf', the local caches)", data));
  std::vector<std::string> looked;
  if (is_saved_dataset(data)) {
    if (auto f = find_in_saved_dataset(data, c.split, &looked)) return from_found(c, data, *f);
    throw Error(fmt::format("{}: --data {} is a save_to_disk folder without the '{}' split: {}", c.name, data, c.split, looked.back()));
  }
  const fs::path saved = fs::path(data) / c.name;
  if (fs::is_directory(saved, ec)) {
    for (const char* ext : {".jsonl", ".parquet"})
      if (fs::exists(saved.string() + ext, ec))
        throw Error(fmt::format("{}: both {} and {}{} exist; keep one", c.name, saved.string(), saved.string(), ext));
    if (!is_saved_dataset(saved.string()))
      throw Error(fmt::format("{}: {} is a folder but not one written by save_to_disk (no state.json or dataset_dict.json)",
                              c.name, saved.string()));
    if (auto f = find_in_saved_dataset(saved.string(), c.split, &looked)) return from_found(c, saved.string(), *f);
    throw Error(fmt::format("{}: {}", c.name, looked.back()));
  }
  return from_file(task_data_file(data, c.name));
}

}  // namespace foxeval::lm_eval
