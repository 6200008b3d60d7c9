#include "tasks/longbench/longbench_data.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/errors.h"
#include "data/records.h"
#include "data/zip_archive.h"
#include "data/python/numbers.h"

namespace fs = std::filesystem;

namespace foxeval::longbench {
namespace {

bool is_string_list(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_string()) return false;
  return true;
}

// LongBench's released files carry numbers among the answers (passage_count: "answers": [15]);
// metrics.py compares str(ground_truth), so any JSON scalar is an answer.
bool is_scalar_list(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (x.is_structured()) return false;
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
  if (!is_scalar_list(r["answers"]))
    throw Error(fmt::format("{}: field 'answers' must be a list of strings or numbers, not {}", where, r["answers"].dump().substr(0, 80)));
  if (!r.contains("length")) throw Error(fmt::format("{}: field 'length' is missing", where));
  if (!r["length"].is_number_integer()) throw Error(fmt::format("{}: field 'length' must be an integer, not {}", where, r["length"].dump()));
  if (!r.contains("all_classes")) throw Error(fmt::format("{}: field 'all_classes' is missing", where));
  if (!r["all_classes"].is_null() && !is_string_list(r["all_classes"]))
    throw Error(fmt::format("{}: field 'all_classes' must be null or a list of strings", where));
}

}  // namespace

namespace {

// LongBench's data.zip as released: data/{task}.jsonl (also accepted at the top or one other folder
// deep).
DataSource task_member(const std::string& zip, const std::string& stem) {
  const std::string want = stem + ".jsonl";
  std::vector<std::string> hits;
  for (const std::string& name : zip_member_names(zip)) {
    const size_t slash = name.find('/');
    const bool shallow = slash == std::string::npos || name.find('/', slash + 1) == std::string::npos;
    if (shallow && fs::path(name).filename() == want) hits.push_back(name);
  }
  if (hits.size() == 1) return DataSource::zip_member(zip, hits[0]);
  if (hits.empty())
    throw Error(fmt::format("--data {}: the archive has no {} (LongBench's data.zip holds data/{})", zip, want, want));
  throw Error(fmt::format("--data {}: the archive has {} members named {} ({}, ...); unzip it and pass the folder", zip,
                          hits.size(), want, hits[0]));
}

}  // namespace

DataSource task_data_source(const std::string& dir, const std::string& task, bool e) {
  const std::string stem = e ? task + "_e" : task;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    if (fs::path(dir).extension() == ".zip") return task_member(dir, stem);
    throw Error(fmt::format("--data {}: expected LongBench's data/ folder or its data.zip, not another file", dir));
  }
  const fs::path jsonl = fs::path(dir) / (stem + ".jsonl"), parquet = fs::path(dir) / (stem + ".parquet");
  if (fs::is_regular_file(jsonl, ec)) return DataSource::on_disk(jsonl.string());
  if (fs::is_regular_file(parquet, ec)) return DataSource::on_disk(parquet.string());
  throw Error(fmt::format("--data {}: task '{}' has neither {} nor {}", dir, task, jsonl.string(), parquet.string()));
}

std::vector<Record> read_task_records(const DataSource& path) {
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
  if (c.is_null()) return {};
  if (!is_string_list(c)) throw Error(fmt::format("field 'all_classes' must be null or a list of strings, not {}", c.dump().substr(0, 80)));
  return c.get<std::vector<std::string>>();
}

std::vector<std::string> answers_of(const nlohmann::json& record) {
  const nlohmann::json& answers = record.at("answers");
  if (!answers.is_array()) throw Error(fmt::format("field 'answers' must be a list, not {}", answers.type_name()));
  std::vector<std::string> out;
  out.reserve(answers.size());
  for (const nlohmann::json& a : answers) out.push_back(python_str(a, "an answer"));
  return out;
}

}  // namespace foxeval::longbench
