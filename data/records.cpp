#include "data/records.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/json_row_builder.h"
#include "data/jsonl_objects.h"
#include "data/parquet_reader.h"
#include "data/zip_archive.h"

namespace foxeval {
namespace {

std::vector<nlohmann::json> parse_jsonl(const std::string& text, const std::string& path) {
  std::vector<nlohmann::json> records;
  append_jsonl_objects(text, path, records);
  return records;
}

using JsonRowBuilder = JsonRowBuilderT<nlohmann::json>;

std::string extension_of(const std::string& path) { return std::filesystem::path(path).extension().string(); }

}  // namespace

std::vector<nlohmann::json> read_records(const std::string& path) {
  const std::string ext = extension_of(path);
  if (const auto zip = split_zip_path(path)) {
    if (ext != ".jsonl")
      throw Error(fmt::format("{}: inside a .zip archive records are read from .jsonl members, not '{}'", path, ext));
    return parse_jsonl(read_zip_member(zip->first, zip->second), path);
  }
  if (ext == ".jsonl") return parse_jsonl(read_text_file(path), path);
  if (ext == ".parquet") {
    std::vector<nlohmann::json> rows;
    JsonRowBuilder builder(rows);
    read_parquet(path, builder);
    return rows;
  }
  throw Error(fmt::format("{}: records are read from .jsonl or .parquet files, not '{}'", path, ext));
}

std::string record_where(const std::string& path, size_t index) {
  if (extension_of(path) == ".parquet") return fmt::format("{} row {}", path, index);
  return fmt::format("{} line {}", path, index + 1);
}

const nlohmann::json& record_field(const nlohmann::json& record, std::string_view field, const std::string& where) {
  if (!record.is_object()) throw Error(fmt::format("{}: a record must be a JSON object, not {}", where, record.type_name()));
  auto it = record.find(field);
  if (it == record.end()) throw Error(fmt::format("{}: missing field '{}'", where, field));
  return *it;
}

const std::string& record_string(const nlohmann::json& record, std::string_view field, const std::string& where) {
  const nlohmann::json& v = record_field(record, field, where);
  if (!v.is_string()) throw Error(fmt::format("{}: field '{}' must be a string, not {}", where, field, v.type_name()));
  return v.get_ref<const std::string&>();
}

}  // namespace foxeval
