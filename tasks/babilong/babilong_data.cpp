#include "tasks/babilong/babilong_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "data/dataset_rows.h"
#include "data/datasets_cache.h"
#include "data/errors.h"
#include "tasks/run/identity.h"

namespace foxeval::babilong {
namespace fs = std::filesystem;

namespace {

SplitData read_split(const std::string& length, const std::string& task, const std::vector<std::string>& files,
                     const std::string& description, nlohmann::json identity) {
  SplitData s{length, task, {}, description, std::move(identity)};
  std::vector<size_t> sizes;
  const std::vector<nlohmann::ordered_json> rows = read_dataset_rows(files, &sizes);
  for (size_t i = 0; i < rows.size(); ++i) {
    Doc d;
    for (auto [field, into] : {std::pair<const char*, std::string*>{"input", &d.input}, {"question", &d.question}, {"target", &d.target}}) {
      auto it = rows[i].find(field);
      if (it == rows[i].end() || !it->is_string())
        throw Error(fmt::format("{}: field '{}' {}", dataset_row_where(files, sizes, i), field,
                                it == rows[i].end() ? "missing" : "is not a string"));
      *into = it->get<std::string>();
    }
    s.docs.push_back(std::move(d));
  }
  if (s.docs.empty()) throw Error(fmt::format("{}: no documents", description));
  nlohmann::json names = nlohmann::json::array();
  for (const std::string& f : files) names.push_back(fs::path(f).filename().string());
  s.identity["files"] = names;
  s.identity["digest"] = digest_paths(files);
  return s;
}

// DIR/{length}/: {task}.jsonl, {task}.parquet, or the shards {task}-*.parquet in name order.
std::vector<std::string> folder_files(const fs::path& dir, const std::string& task) {
  std::error_code ec;
  for (const char* ext : {".jsonl", ".parquet"})
    if (fs::is_regular_file(dir / (task + ext), ec)) return {(dir / (task + ext)).string()};
  std::vector<std::string> shards;
  if (fs::is_directory(dir, ec))
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(task + "-", 0) == 0 && e.path().extension() == ".parquet") shards.push_back(e.path().string());
    }
  std::sort(shards.begin(), shards.end());
  return shards;
}

}  // namespace

std::optional<SplitData> find_split(const std::string& data, const std::string& length, const std::string& task,
                                    std::vector<std::string>* looked) {
  const Definitions& defs = definitions();
  if (data == "hf") {
    const HfSplit want{defs.dataset_path, length, task};
    auto found = find_in_datasets_cache(want, looked);
    if (!found) found = find_in_hub_cache(want, looked);
    if (!found) return std::nullopt;
    return read_split(length, task, found->files,
                      fmt::format("{} ({}, {}) in the {}: {}", defs.dataset_path, length, task, found->kind, found->folder),
                      {{"source", found->kind}, {"dataset", defs.dataset_path}, {"config", length}, {"split", task}});
  }
  std::error_code ec;
  if (!fs::is_directory(data, ec)) throw Error(fmt::format("--data {}: not a folder (nor 'hf', the local caches)", data));
  const fs::path dir = fs::path(data) / length;
  const std::vector<std::string> files = folder_files(dir, task);
  if (files.empty()) {
    looked->push_back(fmt::format("{}/{{{}.jsonl, {}.parquet, {}-*.parquet}}", dir.string(), task, task, task));
    return std::nullopt;
  }
  return read_split(length, task, files, fmt::format("{} ({}, {})", dir.string(), length, task),
                    {{"source", "folder"}, {"config", length}, {"split", task}});
}

}  // namespace foxeval::babilong
