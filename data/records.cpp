#include "data/records.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/parquet_reader.h"
#include "data/utf8.h"
#include "data/zip_archive.h"

namespace foxeval {
namespace {

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos; }

std::vector<nlohmann::json> parse_jsonl(const std::string& text, const std::string& path) {
  std::vector<nlohmann::json> records;
  size_t begin = 0;
  for (size_t line_no = 1; begin < text.size(); ++line_no) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF files
    if (is_blank(line))
      throw Error(fmt::format("{} line {}: blank line (every line must be one JSON object)", path, line_no));
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(fmt::format("{} line {}: not valid JSON ({})", path, line_no, e.what()));
    }
    if (!record.is_object())
      throw Error(fmt::format("{} line {}: a record must be a JSON object, not {}", path, line_no, record.type_name()));
    records.push_back(std::move(record));
  }
  return records;
}

// Builds one JSON object per Parquet row from the reader's callbacks.
class JsonRowBuilder final : public ParquetValueSink {
 public:
  explicit JsonRowBuilder(std::vector<nlohmann::json>& rows) : rows_(rows) {}

  void begin_row() override { open(nlohmann::json::object()); }
  void end_row() override {
    rows_.push_back(std::move(*stack_.back()));
    stack_.clear();
    row_.reset();
  }
  void key(const char* data, size_t size) override { key_.assign(data, size); }
  void null_value() override { put(nullptr); }
  void bool_value(bool v) override { put(v); }
  void int_value(int64_t v) override { put(v); }
  void uint_value(uint64_t v) override { put(v); }
  void double_value(double v) override { put(v); }
  void string_value(const char* data, size_t size) override {
    std::string_view s(data, size);
    // Parquet declares strings UTF-8 but Arrow does not check; invalid bytes would only fail
    // later, far from the file, when the record is dumped.
    if (utf8::first_invalid(s) != std::string_view::npos)
      throw Error(fmt::format("field '{}': a string is not valid UTF-8", key_));
    put(std::string(s));
  }
  void begin_list() override { open(nlohmann::json::array()); }
  void end_list() override { stack_.pop_back(); }
  void begin_struct() override { open(nlohmann::json::object()); }
  void end_struct() override { stack_.pop_back(); }

 private:
  // Places `v` in the innermost open container (under the last key for objects) and returns it.
  nlohmann::json* put(nlohmann::json v) {
    nlohmann::json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    nlohmann::json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  void open(nlohmann::json container) {
    if (stack_.empty()) {
      row_ = std::make_unique<nlohmann::json>(std::move(container));
      stack_.push_back(row_.get());
    } else {
      stack_.push_back(put(std::move(container)));
    }
  }

  std::vector<nlohmann::json>& rows_;
  std::unique_ptr<nlohmann::json> row_;
  std::vector<nlohmann::json*> stack_;  // open containers, the row first
  std::string key_;
};

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
