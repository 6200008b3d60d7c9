#include "tasks/longbench/longbench_data.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/errors.h"
#include "data/records.h"

namespace fs = std::filesystem;

namespace foxeval::longbench {
namespace {

bool is_string_list(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_string()) return false;
  return true;
}

// Checks one record; `where` is "FILE line N" (or "FILE row N" for parquet).
void check_record(const nlohmann::json& r, const std::string& where) {
  if (!r.is_object()) throw Error(fmt::format("{}: a record must be a JSON object, not {}", where, r.type_name()));
  for (const char* field : {"input", "context", "dataset", "language", "_id"}) {
    if (!r.contains(field)) throw Error(fmt::format("{}: field '{}' is missing", where, field));
    if (!r[field].is_string()) throw Error(fmt::format("{}: field '{}' must be a string, not {}", where, field, r[field].type_name()));
  }
  if (!r.contains("answers")) throw Error(fmt::format("{}: field 'answers' is missing", where));
  if (!is_string_list(r["answers"])) throw Error(fmt::format("{}: field 'answers' must be a list of strings", where));
  if (!r.contains("length")) throw Error(fmt::format("{}: field 'length' is missing", where));
  if (!r["length"].is_number_integer()) throw Error(fmt::format("{}: field 'length' must be an integer, not {}", where, r["length"].dump()));
  if (!r.contains("all_classes")) throw Error(fmt::format("{}: field 'all_classes' is missing", where));
  if (!r["all_classes"].is_null() && !is_string_list(r["all_classes"]))
    throw Error(fmt::format("{}: field 'all_classes' must be null or a list of strings", where));
}

}  // namespace

std::string task_data_path(const std::string& dir, const std::string& task, bool e) {
  const std::string stem = e ? task + "_e" : task;
  const fs::path jsonl = fs::path(dir) / (stem + ".jsonl"), parquet = fs::path(dir) / (stem + ".parquet");
  std::error_code ec;
  if (fs::is_regular_file(jsonl, ec)) return jsonl.string();
  if (fs::is_regular_file(parquet, ec)) return parquet.string();
  throw Error(fmt::format("--data {}: task '{}' has neither {} nor {}", dir, task, jsonl.string(), parquet.string()));
}

std::vector<Record> read_task_records(const std::string& path) {
  std::vector<nlohmann::json> rows = read_records(path);
  std::vector<Record> records;
  records.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    check_record(rows[i], record_where(path, i));
    records.push_back({static_cast<int64_t>(i), std::move(rows[i])});
  }
  return records;
}

std::vector<std::string> all_classes_of(const nlohmann::json& record) {
  const nlohmann::json& c = record.at("all_classes");
  return c.is_null() ? std::vector<std::string>{} : c.get<std::vector<std::string>>();
}

std::vector<std::string> answers_of(const nlohmann::json& record) { return record.at("answers").get<std::vector<std::string>>(); }

}  // namespace foxeval::longbench
