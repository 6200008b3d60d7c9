#include "data/records.h"

#include <fmt/format.h>


#include "data/errors.h"
#include "data/json_file.h"
#include "data/json_row_builder.h"
#include "data/jsonl_objects.h"
#include "data/parquet_reader.h"

namespace foxeval {
namespace {

std::vector<nlohmann::json> parse_jsonl(const std::string& text, const std::string& path) {
  std::vector<nlohmann::json> records;
  append_jsonl_objects(text, path, records);
  return records;
}

using JsonRowBuilder = JsonRowBuilderT<nlohmann::json>;

}  // namespace

std::vector<nlohmann::json> read_records(const DataSource& source) {
  const std::string ext = source.extension();
  if (source.in_zip() && ext != ".jsonl")
    throw Error(fmt::format("{}: inside a .zip archive records are read from .jsonl members, not '{}'", source.where(), ext));
  if (ext == ".jsonl") return parse_jsonl(source.read(), source.where());
  if (ext == ".parquet") {
    std::vector<nlohmann::json> rows;
    JsonRowBuilder builder(rows);
    read_parquet(source.file, builder);
    return rows;
  }
  throw Error(fmt::format("{}: records are read from .jsonl or .parquet files, not '{}'", source.where(), ext));
}

std::string record_where(const DataSource& source, size_t index) {
  if (source.extension() == ".parquet") return fmt::format("{} row {}", source.where(), index);
  return fmt::format("{} line {}", source.where(), index + 1);
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
