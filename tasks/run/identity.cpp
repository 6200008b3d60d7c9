#include "tasks/run/identity.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "data/content_digest.h"
#include "data/errors.h"
#include "tasks/task_def.h"

namespace fs = std::filesystem;

namespace foxeval {

nlohmann::json model_identity(const LoadedModel& model) {
  const ModelInfo& info = model->info();
  nlohmann::json id = {{"model", model.files.identity_path},
                       {"model_digest", model.digest.digest},
                       {"model_digest_source", model.digest.source},
                       {"model_type", info.model_type},
                       {"num_parameters", info.num_parameters}};
  for (const auto& [key, value] : info.settings)
    if (key == "log_pruning_tolerance") id["log_pruning_tolerance"] = value;
  return id;
}

std::string digest_paths(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> named;  // name -> path, then name -> digest
  for (const std::string& top : paths) {
    std::error_code ec;
    if (fs::is_directory(top, ec)) {
      std::vector<std::pair<std::string, std::string>> files;
      for (const auto& e : fs::recursive_directory_iterator(top))
        if (e.is_regular_file()) files.emplace_back(fs::relative(e.path(), top).generic_string(), e.path().string());
      std::sort(files.begin(), files.end());
      named.insert(named.end(), files.begin(), files.end());
    } else {
      if (!fs::is_regular_file(top, ec)) throw Error(fmt::format("{}: cannot read (taking its digest)", top));
      named.emplace_back(fs::path(top).filename().string(), top);
    }
  }
  std::vector<std::string> files;
  for (const auto& [name, path] : named) files.push_back(path);
  const std::vector<std::string> hex = sha256_files(files);
  for (size_t i = 0; i < named.size(); ++i) named[i].second = hex[i];
  return combine_digests(named);
}

const std::vector<std::string>& identity_information_keys() {
  // Where the model, the output and the shards are (every task's identity has them), and how a
  // digest was found; each task adds its own paths (TaskDef::path_keys, tasks/task_def.h). Tasks
  // register while static objects are made, before anything asks.
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"model", "model_dir", "out", "num_shards", "model_digest_source"};
    for (const std::string& t : task_path_keys())
      if (std::find(k.begin(), k.end(), t) == k.end()) k.push_back(t);
    return k;
  }();
  return keys;
}

}  // namespace foxeval
