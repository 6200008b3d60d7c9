// Rules matched: datasets 5.2 (config.py: HF_DATASETS_CACHE; naming.py: camelcase_to_snakecase,
// filenames_for_dataset_split; builder.py: _relative_data_dir; packaged_modules/cache/cache.py:
// _find_hash_in_cache; arrow_dataset.py/dataset_dict.py: save_to_disk), the same since datasets
// 2.14, when the cache layout became {org}___{name}/{config}/{version}/{hash}.
#include "data/datasets_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/hf_env.h"
#include "data/hub_cache.h"
#include "data/hub_ref.h"
#include "data/json_file.h"
#include "data/model_files.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// The folders (`folders`) or regular files directly in dir, sorted; none when dir is not a folder.
std::vector<fs::path> sorted_entries(const fs::path& dir, bool folders) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (folders ? e.is_directory(ec) : e.is_regular_file(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> subdirs(const fs::path& dir) { return sorted_entries(dir, true); }
std::vector<fs::path> files_in(const fs::path& dir) { return sorted_entries(dir, false); }

// dataset_info.json of a hash folder, or null when it is missing or unreadable (datasets would
// fail on it; such a folder is skipped and named in the message).
nlohmann::json read_info(const fs::path& dir) {
  const fs::path p = dir / "dataset_info.json";
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return nullptr;
  try {
    return read_json(p.string());
  } catch (const std::exception&) {
    return nullptr;
  }
}

bool is_shard_suffix(const std::string& s, int* index, int* count) {
  // "-NNNNN-of-NNNNN"
  static const RE2 re("-([0-9]{5})-of-([0-9]{5})");
  return RE2::FullMatch(s, re, index, count);
}

// The config and split of a lookup become folder and file names: a config must be one plain name
// (no '/', not '..', not absolute) and a split \w+(\.\w+)* (datasets' naming._split_re), so that
// nothing outside the cache or the folder given is read (FOXEVAL_TASKS_DIR lets a user write them).
void check_names(const std::string& config, const std::string& split) {
  if (!config.empty() && !is_plain_file_name(config))
    throw Error(fmt::format("dataset config '{}' is not a plain folder name", config));
  if (!RE2::FullMatch(split, "\\w+(\\.\\w+)*")) throw Error(fmt::format("split name '{}' is not a datasets split name", split));
}

// Shards {split}-NNNNN-of-MMMMM of one split: every index 0..M-1 present, one M. A split some of
// whose shards are missing (a download cut short) must not pass for the whole split.
bool complete_shards(const std::vector<std::string>& files, std::string* why) {
  static const RE2 re("-([0-9]{5})-of-([0-9]{5})");
  std::set<int> seen;
  int total = -1;
  for (const std::string& f : files) {
    int index = 0, count = 0;
    if (!RE2::PartialMatch(fs::path(f).filename().string(), re, &index, &count)) continue;
    if (total >= 0 && count != total) {
      *why = fmt::format("shards of {} and of {} files side by side", total, count);
      return false;
    }
    total = count;
    seen.insert(index);
  }
  if (total < 0) return true;  // not sharded
  for (int i = 0; i < total; ++i)
    if (!seen.count(i)) {
      *why = fmt::format("shard {:05d} of {:05d} is missing ({} of {} present)", i, total, seen.size(), total);
      return false;
    }
  return true;
}

// The split's .arrow files in a hash folder: {prefix}-{split}.arrow, or every shard
// {prefix}-{split}-NNNNN-of-NNNNN.arrow (all of them, in order). The prefix is the builder's
// dataset name; files of other splits never match (the split is followed by '.' or '-NNNNN').
std::vector<std::string> split_arrow_files(const fs::path& dir, const std::string& split, const nlohmann::json& info,
                                           std::string* why) {
  std::map<std::string, std::vector<std::pair<int, std::string>>> by_prefix;  // prefix -> (shard, file)
  std::map<std::string, int> shard_counts;
  const std::string single = "-" + split + ".arrow";
  for (const fs::path& f : files_in(dir)) {
    const std::string name = f.filename().string();
    if (name.size() > single.size() && name.compare(name.size() - single.size(), single.size(), single) == 0) {
      by_prefix[name.substr(0, name.size() - single.size())].emplace_back(-1, f.string());
      continue;
    }
    const std::string mid = "-" + split + "-";
    const size_t at = name.rfind(mid);
    if (at == std::string::npos || name.size() < 6 || name.compare(name.size() - 6, 6, ".arrow") != 0) continue;
    int index = 0, count = 0;
    if (!is_shard_suffix(name.substr(at + mid.size() - 1, name.size() - 6 - (at + mid.size() - 1)), &index, &count)) continue;
    const std::string prefix = name.substr(0, at);
    by_prefix[prefix].emplace_back(index, f.string());
    shard_counts[prefix] = count;
  }
  if (by_prefix.empty()) {
    *why = fmt::format("no *-{}.arrow or *-{}-NNNNN-of-NNNNN.arrow file", split, split);
    return {};
  }
  std::string prefix;
  if (by_prefix.size() == 1) {
    prefix = by_prefix.begin()->first;
  } else {
    for (const char* key : {"dataset_name", "builder_name"})
      if (info.is_object() && info.contains(key) && info[key].is_string() && by_prefix.count(info[key].get<std::string>())) {
        prefix = info[key].get<std::string>();
        break;
      }
    if (prefix.empty()) {
      std::vector<std::string> names;
      for (const auto& [p, v] : by_prefix) names.push_back(p);
      *why = fmt::format("files of the split with several prefixes ({}) and none is dataset_info.json's dataset name",
                         fmt::join(names, ", "));
      return {};
    }
  }
  auto shards = by_prefix[prefix];
  std::sort(shards.begin(), shards.end());
  if (shards.size() == 1 && shards[0].first == -1) return {shards[0].second};
  const int count = shard_counts[prefix];
  bool complete = static_cast<int>(shards.size()) == count;
  for (size_t k = 0; complete && k < shards.size(); ++k) complete = shards[k].first == static_cast<int>(k);
  if (!complete) {
    *why = fmt::format("the shards of {}-{} are not all there or mix single and sharded files ({} files, {} expected)", prefix,
                       split, shards.size(), count);
    return {};
  }
  std::vector<std::string> out;
  for (const auto& s : shards) out.push_back(s.second);
  return out;
}

int64_t split_rows_of(const nlohmann::json& info, const std::string& split) {
  if (!info.is_object() || !info.contains("splits") || !info["splits"].is_object()) return -1;
  const nlohmann::json& s = info["splits"];
  if (!s.contains(split) || !s[split].is_object() || !s[split].contains("num_examples")) return -1;
  return s[split]["num_examples"].is_number_integer() ? s[split]["num_examples"].get<int64_t>() : -1;
}

double mtime_of(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  return ec ? 0.0 : std::chrono::duration<double>(t.time_since_epoch()).count();
}

// The hub's folder name for a dataset repo: datasets--{org}--{name} or datasets--{name}.
std::string hub_repo_folder(const std::string& repo_id) {
  std::string out = "datasets";
  size_t start = 0;
  while (true) {
    const size_t slash = repo_id.find('/', start);
    out += "--" + repo_id.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

// Sorted files of `dir` (not below) whose name matches the RE2 `pattern` in full.
std::vector<std::string> matching(const fs::path& dir, const std::string& pattern) {
  const RE2 re(pattern);
  std::vector<std::string> out;
  for (const fs::path& f : files_in(dir))
    if (RE2::FullMatch(f.filename().string(), re)) out.push_back(f.string());
  return out;
}

}  // namespace

std::string camelcase_to_snakecase(const std::string& name) {
  std::string s = name;
  static const RE2 upper_upper("([A-Z]+)([A-Z][a-z])");
  static const RE2 lower_upper("([a-z0-9])([A-Z])");
  RE2::GlobalReplace(&s, upper_upper, "\\1_\\2");
  RE2::GlobalReplace(&s, lower_upper, "\\1_\\2");
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

CacheRoot datasets_cache_root() {
  if (const char* v = env_set("HF_DATASETS_CACHE")) return {python_expanduser(v), "$HF_DATASETS_CACHE"};
  if (const char* v = env_set("HF_HOME")) return {path_join(python_expanduser(v), "datasets"), "$HF_HOME/datasets"};
  if (const char* x = env_set("XDG_CACHE_HOME"))
    return {path_join(python_expanduser(path_join(x, "huggingface")), "datasets"), "$XDG_CACHE_HOME/huggingface/datasets"};
  return {path_join(python_expanduser("~/.cache/huggingface"), "datasets"), "the default ~/.cache/huggingface/datasets"};
}

std::optional<HfSplitFiles> find_in_datasets_cache(const HfSplit& want, std::vector<std::string>* looked) {
  check_names(want.config, want.split);
  if (const std::string problem = repo_id_problem(want.repo_id); !problem.empty())
    throw Error(fmt::format("dataset id {}: {}", want.repo_id, problem));
  const CacheRoot root = datasets_cache_root();
  const size_t slash = want.repo_id.find('/');
  const std::string folder = slash == std::string::npos
                                 ? camelcase_to_snakecase(want.repo_id)
                                 : want.repo_id.substr(0, slash) + "___" + camelcase_to_snakecase(want.repo_id.substr(slash + 1));
  const fs::path dataset_dir = fs::path(root.path) / folder;
  const std::string where = fmt::format("datasets cache (from {}): {}", root.from, dataset_dir.string());
  if (!fs::is_directory(dataset_dir)) {
    looked->push_back(where + " (missing)");
    return std::nullopt;
  }
  // Candidate hash folders {config}/{version}/{hash} whose dataset_info.json names that config.
  struct Candidate {
    fs::path dir;
    std::string config;
    nlohmann::json info;
  };
  std::vector<Candidate> candidates;
  std::vector<fs::path> config_dirs;
  if (!want.config.empty()) {
    config_dirs.push_back(dataset_dir / want.config);
  } else {
    config_dirs = subdirs(dataset_dir);
  }
  for (const fs::path& c : config_dirs)
    for (const fs::path& v : subdirs(c))
      for (const fs::path& h : subdirs(v)) {
        nlohmann::json info = read_info(h);
        if (!info.is_object() || !info.contains("config_name") || info["config_name"] != c.filename().string()) {
          looked->push_back(fmt::format("{}: {} (no dataset_info.json naming config '{}')", where,
                                        fs::relative(h, dataset_dir).string(), c.filename().string()));
          continue;
        }
        candidates.push_back({h, c.filename().string(), std::move(info)});
      }
  if (candidates.empty()) {
    looked->push_back(fmt::format("{} (no {} folder with a prepared version/hash)", where,
                                  want.config.empty() ? std::string("config") : "'" + want.config + "' config"));
    return std::nullopt;
  }
  // The newest by modification time, as datasets' offline reload.
  const Candidate* best = &candidates[0];
  for (const Candidate& c : candidates)
    if (mtime_of(c.dir) > mtime_of(best->dir)) best = &c;
  if (want.config.empty()) {
    std::set<std::string> same;  // configs at the newest version/hash
    for (const Candidate& c : candidates)
      if (c.dir.filename() == best->dir.filename() && c.dir.parent_path().filename() == best->dir.parent_path().filename())
        same.insert(c.config);
    if (same.size() > 1)
      throw Error(fmt::format("{}: several configurations of {} in the cache ({}) and the task names none; datasets "
                              "refuses this too: remove the ones that are not the dataset's default",
                              dataset_dir.string(), want.repo_id, fmt::join(same, ", ")));
  }
  std::string why;
  std::vector<std::string> files = split_arrow_files(best->dir, want.split, best->info, &why);
  if (files.empty()) {
    looked->push_back(fmt::format("{}: {} ({})", where, fs::relative(best->dir, dataset_dir).string(), why));
    return std::nullopt;
  }
  return HfSplitFiles{"datasets cache", best->dir.string(), best->config, std::move(files), split_rows_of(best->info, want.split)};
}

std::optional<HfSplitFiles> find_in_hub_cache(const HfSplit& want, std::vector<std::string>* looked) {
  if (const std::string problem = repo_id_problem(want.repo_id); !problem.empty())
    throw Error(fmt::format("dataset id {}: {}", want.repo_id, problem));
  const fs::path repo = fs::path(hub_cache_dir()) / hub_repo_folder(want.repo_id);
  const fs::path ref = repo / "refs" / "main";
  const std::string where = "hub cache: " + repo.string();
  const std::string commit = read_hub_ref(ref.string());  // bounded, never waits on a FIFO
  if (commit.empty()) {
    looked->push_back(fmt::format("{} ({})", where, fs::is_directory(repo) ? "no refs/main" : "missing"));
    return std::nullopt;
  }
  if (commit.find('/') != std::string::npos || commit == "." || commit == "..")
    throw Error(fmt::format("{} holds '{}', which is not a commit hash", ref.string(), commit));
  const fs::path snapshot = repo / "snapshots" / commit;
  if (!fs::is_directory(snapshot)) {
    looked->push_back(fmt::format("{} (refs/main -> {}, no such snapshot)", where, commit));
    return std::nullopt;
  }
  check_names(want.config, want.split);  // a split name holds nothing a pattern must escape but '.'
  std::string split = want.split;
  std::string quoted;
  for (char c : split) quoted += c == '.' ? std::string("\\.") : std::string(1, c);
  const std::string shard = quoted + "-[0-9]{5}-of-[0-9]{5}[^/]*\\.parquet";
  fs::path root = snapshot;
  std::string config_used;
  if (!want.config.empty() && fs::is_directory(snapshot / want.config)) {
    root = snapshot / want.config;
    config_used = want.config;
  } else if (!want.config.empty() && want.config != "default") {
    looked->push_back(fmt::format("{}: snapshots/{} (no '{}' config folder)", where, commit, want.config));
    return std::nullopt;
  }
  const std::vector<std::pair<fs::path, std::string>> conventions = {
      {root / "data", shard},       {root, shard},         {root, quoted + "\\.parquet"}, {root, quoted + "-[^/]*\\.parquet"},
      {root / split, "[^/]*\\.parquet"}, {root / "data", quoted + "\\.parquet"}, {root / "data", quoted + "-[^/]*\\.parquet"}};
  for (const auto& [dir, pattern] : conventions) {
    std::vector<std::string> files = matching(dir, pattern);
    if (files.empty()) continue;
    std::string why;
    if (!complete_shards(files, &why)) {
      looked->push_back(fmt::format("{}: {} (split '{}': {})", where, dir.string(), want.split, why));
      return std::nullopt;
    }
    return HfSplitFiles{"hub cache", snapshot.string(), config_used, std::move(files), -1};
  }
  looked->push_back(fmt::format("{}: snapshots/{}/{} (no parquet file of split '{}')", where, commit,
                                config_used.empty() ? std::string() : config_used + "/", want.split));
  return std::nullopt;
}

bool is_saved_dataset(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "state.json", ec) || fs::is_regular_file(fs::path(dir) / "dataset_dict.json", ec);
}

std::optional<HfSplitFiles> find_in_saved_dataset(const std::string& dir, const std::string& split,
                                                  std::vector<std::string>* looked) {
  check_names("", split);
  fs::path ds = dir;
  if (fs::is_regular_file(ds / "dataset_dict.json")) {
    const nlohmann::json dd = read_json((ds / "dataset_dict.json").string());
    bool listed = false;
    if (dd.contains("splits") && dd["splits"].is_array())
      for (const nlohmann::json& s : dd["splits"]) listed = listed || s == split;
    if (!listed) {
      looked->push_back(fmt::format("save_to_disk DatasetDict {} (dataset_dict.json lists no split '{}')", dir, split));
      return std::nullopt;
    }
    ds /= split;
  }
  const fs::path state_path = ds / "state.json";
  if (!fs::is_regular_file(state_path)) {
    looked->push_back(fmt::format("save_to_disk folder {} (no state.json)", ds.string()));
    return std::nullopt;
  }
  const nlohmann::json state = read_json(state_path.string());
  if (state.contains("_split") && state["_split"].is_string() && state["_split"] != split) {
    looked->push_back(fmt::format("save_to_disk Dataset {} (holds split '{}', not '{}')", ds.string(),
                                  state["_split"].get<std::string>(), split));
    return std::nullopt;
  }
  if (!state.contains("_data_files") || !state["_data_files"].is_array() || state["_data_files"].empty())
    throw Error(fmt::format("{}: no _data_files list", state_path.string()));
  HfSplitFiles out{"save_to_disk", ds.string(), "", {}, -1};
  for (const nlohmann::json& f : state["_data_files"]) {
    if (!f.is_object() || !f.contains("filename") || !f["filename"].is_string())
      throw Error(fmt::format("{}: _data_files entry {} has no filename", state_path.string(), f.dump()));
    const std::string name = f["filename"].get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      throw Error(fmt::format("{}: _data_files names '{}', not a file of the folder", state_path.string(), name));
    out.files.push_back((ds / name).string());
  }
  return out;
}

}  // namespace foxeval
