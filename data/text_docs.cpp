#include "data/text_docs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "data/content_digest.h"
#include "data/dataset_rows.h"
#include "data/datasets_cache.h"
#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

bool is_text_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".jsonl" || ext == ".parquet" || ext == ".arrow" || ext == ".txt";
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// The value at a dotted path ("document.text") of a row, or null when a step is missing.
const ordered_json* field_at(const ordered_json& row, const std::string& path) {
  const ordered_json* v = &row;
  for (const std::string& step : split_on(path, '.')) {
    if (!v->is_object()) return nullptr;
    auto it = v->find(step);
    if (it == v->end()) return nullptr;
    v = &*it;
  }
  return v;
}

struct Located {
  std::vector<std::string> files;
  std::string description;
  json identity;
};

Located from_found(const std::string& name, const std::string& split, const HfSplitFiles& f) {
  Located l;
  l.files = f.files;
  l.description = fmt::format("{} ({}, split {}) in the {}: {}", name, f.config.empty() ? "no config" : "config " + f.config,
                              split, f.kind, f.folder);
  json names = json::array();
  for (const std::string& p : f.files) names.push_back(fs::path(p).filename().string());
  l.identity = {{"source", f.kind}, {"dataset", name}, {"config", f.config}, {"split", split}, {"files", names}};
  return l;
}

// "hf:ORG/NAME:SPLIT" or "hf:ORG/NAME:CONFIG:SPLIT" in the datasets cache, then the hub cache.
Located locate_hf(const std::string& spec) {
  const std::vector<std::string> parts = split_on(spec.substr(3), ':');
  if (parts.size() < 2 || parts.size() > 3 || parts.front().empty() || parts.back().empty())
    throw Error(fmt::format("--text {}: expected hf:ORG/NAME:SPLIT or hf:ORG/NAME:CONFIG:SPLIT", spec));
  const HfSplit want{parts[0], parts.size() == 3 ? parts[1] : "", parts.back()};
  std::vector<std::string> looked;
  if (auto f = find_in_datasets_cache(want, &looked)) return from_found(want.repo_id, want.split, *f);
  if (auto f = find_in_hub_cache(want, &looked)) return from_found(want.repo_id, want.split, *f);
  std::string places;
  for (const std::string& l : looked) places += "\n  " + l;
  throw Error(fmt::format(
      "--text {}: the '{}' split of {} is in no local Hugging Face cache (foxeval never downloads). Looked in:{}\n"
      "Fetch it on a machine with network (into the same cache, or copy the cache here):\n"
      "  python -c \"import datasets; datasets.load_dataset('{}'{}, split='{}')\"",
      spec, want.split, want.repo_id, places, want.repo_id, want.config.empty() ? "" : ", '" + want.config + "'",
      want.split));
}

Located locate_saved(const std::string& dir, std::string split) {
  if (split.empty() && fs::is_regular_file(fs::path(dir) / "dataset_dict.json")) {
    const json dd = read_json((fs::path(dir) / "dataset_dict.json").string());
    const json splits = dd.value("splits", json::array());
    if (splits.size() != 1)
      throw Error(fmt::format("--text {}: a save_to_disk DatasetDict of splits {}: name one with --text-split", dir,
                              splits.dump()));
    split = splits[0].get<std::string>();
  }
  std::vector<std::string> looked;
  if (auto f = find_in_saved_dataset(dir, split, &looked)) return from_found(dir, split, *f);
  throw Error(fmt::format("--text {}: {}", dir, looked.empty() ? "no such split" : looked.back()));
}

Located locate_files(const std::string& path) {
  std::error_code ec;
  Located l;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.empty() && name[0] != '.' && e.is_regular_file(ec) && is_text_file(e.path())) l.files.push_back(e.path().string());
    }
    std::sort(l.files.begin(), l.files.end());  // code point order of the names
    if (l.files.empty())
      throw Error(fmt::format("--text {}: a folder without .jsonl, .parquet, .arrow or .txt files (nor a save_to_disk folder)", path));
    l.description = fmt::format("{} ({} files)", path, l.files.size());
  } else if (fs::is_regular_file(path, ec)) {
    if (!is_text_file(path))
      throw Error(fmt::format("--text {}: documents are read from .jsonl, .parquet, .arrow or .txt files", path));
    l.files = {path};
    l.description = path;
  } else {
    throw Error(fmt::format("--text {}: no such file or folder (a dataset in the Hugging Face caches is hf:ORG/NAME:SPLIT)", path));
  }
  json names = json::array();
  for (const std::string& p : l.files) names.push_back(fs::path(p).filename().string());
  l.identity = {{"source", "files"}, {"files", names}};
  return l;
}

}  // namespace

std::string text_docs_digest(const std::vector<std::string>& docs) {
  Sha256 h;
  for (const std::string& d : docs) {
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<uint64_t>(d.size()) >> (8 * i));
    h.update(len, 8);
    h.update(d);
  }
  return "sha256:" + h.hex();
}

TextDocs read_text_docs(const TextSourceSpec& spec) {
  if (spec.field.empty()) throw Error("--text-field: must not be empty");
  Located where = spec.source.rfind("hf:", 0) == 0       ? locate_hf(spec.source)
                  : is_saved_dataset(spec.source)        ? locate_saved(spec.source, spec.split)
                                                         : locate_files(spec.source);
  TextDocs out;
  out.description = where.description;
  out.identity = where.identity;
  out.identity["field"] = spec.field;
  if (!spec.dedupe.empty()) out.identity["dedupe"] = spec.dedupe;
  std::unordered_set<std::string> seen;
  for (const std::string& file : where.files) {
    if (fs::path(file).extension() == ".txt") {  // one document: the file's bytes
      out.docs.push_back(read_text_file(file));
      continue;
    }
    std::vector<size_t> sizes;
    std::vector<ordered_json> rows = read_dataset_rows({file}, &sizes);
    for (size_t i = 0; i < rows.size(); ++i) {
      const ordered_json* v = field_at(rows[i], spec.field);
      if (!v || !v->is_string())
        throw Error(fmt::format("{}: {} field '{}' (--text-field){}", dataset_row_where({file}, sizes, i),
                                v ? "has a non-string" : "has no", spec.field, v ? ": " + std::string(v->type_name()) : ""));
      if (!spec.dedupe.empty()) {
        const ordered_json* key = field_at(rows[i], spec.dedupe);
        if (!key) throw Error(fmt::format("{}: no field '{}' (the corpus' dedupe key)", dataset_row_where({file}, sizes, i), spec.dedupe));
        if (!seen.insert(key->dump()).second) {
          ++out.duplicates;
          continue;
        }
      }
      out.docs.push_back(v->get<std::string>());
      rows[i] = nullptr;  // the text now lives in docs: free the row
    }
  }
  if (out.docs.empty()) throw Error(fmt::format("--text {}: {} holds no documents", spec.source, out.description));
  out.digest = text_docs_digest(out.docs);
  return out;
}

}  // namespace foxeval
