#include "tasks/suite/suite_entry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "data/errors.h"
#include "tasks/suite/suite_file.h"  // escape_pointer

namespace fs = std::filesystem;

namespace foxeval::suite {
namespace {

// "/tasks/2" -> "tasks[2]"
std::string readable(const std::string& pointer) {
  std::string out;
  size_t i = 1;
  while (i <= pointer.size()) {
    const size_t next = pointer.find('/', i);
    const std::string part = pointer.substr(i, next == std::string::npos ? std::string::npos : next - i);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
      out += "[" + part + "]";
    else
      out += (out.empty() ? "" : ".") + part;
    if (next == std::string::npos) break;
    i = next + 1;
  }
  return out;
}

}  // namespace

PreparedTask prepared(std::function<void(const TaskContext&)> run) {
  PreparedTask p;
  p.run = std::move(run);
  return p;
}

TaskSettings::TaskSettings(nlohmann::json entry, std::string pointer, const SourceLines* source, std::string base_dir)
    : entry_(std::move(entry)), pointer_(std::move(pointer)), base_dir_(std::move(base_dir)), source_(source) {
  // Keys the suite itself reads from an entry.
  read_ = {"task", "name", "models"};
}

std::string TaskSettings::where(const std::string& key) const {
  const std::string p = key.empty() ? pointer_ : pointer_ + "/" + escape_pointer(key);
  return source_ ? source_->at(p, readable(p)) : readable(p);
}

void TaskSettings::fail(const std::string& key, const std::string& what) const {
  throw Error(fmt::format("{}: {}", where(key), what));
}

bool TaskSettings::has(const std::string& key) const { return entry_.contains(key) && !entry_[key].is_null(); }

const nlohmann::json* TaskSettings::get(const std::string& key) {
  read_.insert(key);
  return has(key) ? &entry_[key] : nullptr;
}

std::string TaskSettings::text(const std::string& key, const std::string& fallback) {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return v->dump();
  fail(key, fmt::format("expected a text, got {}", v->dump()));
}

std::string TaskSettings::required_text(const std::string& key) {
  if (!has(key)) fail(key, "is required");
  return text(key, "");
}

std::string TaskSettings::path(const std::string& key) {
  const std::string p = text(key, "");
  if (p.empty()) return p;
  const std::string resolved = fs::path(p).is_absolute() ? p : (fs::path(base_dir_) / p).lexically_normal().string();
  inputs_.push_back({where(key), resolved});
  paths_[key] = resolved;
  return resolved;
}

std::string TaskSettings::required_path(const std::string& key) {
  if (!has(key)) fail(key, "is required (a path, relative to the suite file's folder)");
  return path(key);
}

std::string TaskSettings::path_or(const std::string& key, const std::string& word, const std::string& fallback) {
  if (!has(key)) return fallback;
  if (entry_[key].is_string() && entry_[key].get<std::string>() == word) return text(key, word);
  return path(key);
}

int64_t TaskSettings::integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_number_integer()) fail(key, fmt::format("expected an integer, got {}", v->dump()));
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max) fail(key, fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

double TaskSettings::number(const std::string& key, double fallback, double min, double max) {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_number()) fail(key, fmt::format("expected a number, got {}", v->dump()));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max) fail(key, fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

bool TaskSettings::flag(const std::string& key, bool fallback) {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, fmt::format("expected true or false, got {}", v->dump()));
  return v->get<bool>();
}

std::string TaskSettings::joined(const std::string& key) {
  const nlohmann::json* v = get(key);
  if (!v) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number_integer()) return v->dump();
  if (!v->is_array() || v->empty()) fail(key, fmt::format("expected a list (or the flag's text), got {}", v->dump()));
  std::string out;
  for (const auto& x : *v) {
    if (!x.is_string() && !x.is_number_integer()) fail(key, fmt::format("a list item must be a text or an integer, got {}", x.dump()));
    out += (out.empty() ? "" : ",") + (x.is_string() ? x.get<std::string>() : x.dump());
  }
  return out;
}

std::vector<int64_t> TaskSettings::integers(const std::string& key) {
  const nlohmann::json* v = get(key);
  std::vector<int64_t> out;
  if (!v) return out;
  if (v->is_number_integer()) return {v->get<int64_t>()};
  if (!v->is_array() || v->empty()) fail(key, fmt::format("expected a list of integers, got {}", v->dump()));
  for (const auto& x : *v) {
    if (!x.is_number_integer()) fail(key, fmt::format("expected a list of integers, got the item {}", x.dump()));
    out.push_back(x.get<int64_t>());
  }
  return out;
}

std::vector<std::string> TaskSettings::texts(const std::string& key) {
  const std::string j = joined(key);
  std::vector<std::string> out;
  size_t i = 0;
  while (!j.empty() && i <= j.size()) {
    const size_t c = j.find(',', i);
    const std::string item = j.substr(i, c == std::string::npos ? std::string::npos : c - i);
    if (item.empty()) fail(key, fmt::format("an empty item in '{}'", j));
    out.push_back(item);
    if (c == std::string::npos) break;
    i = c + 1;
  }
  return out;
}

void TaskSettings::finish() const {
  std::vector<std::string> unknown, known(read_.begin(), read_.end());
  for (const auto& [k, _] : entry_.items())
    if (!read_.count(k)) unknown.push_back(k);
  if (!unknown.empty())
    fail(unknown.front(), fmt::format("not a setting of task '{}' (its settings: {})", entry_.value("task", std::string()),
                                      fmt::join(known, ", ")));
}

}  // namespace foxeval::suite
