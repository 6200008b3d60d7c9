#include "data/dataset_rows.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/arrow_ipc_reader.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/json_row_builder.h"
#include "data/jsonl_objects.h"
#include "data/parquet_reader.h"

namespace foxeval {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string extension_of(const std::string& path) { return std::filesystem::path(path).extension().string(); }

}  // namespace

std::vector<ordered_json> read_dataset_rows(const std::vector<std::string>& files, std::vector<size_t>* sizes) {
  std::vector<ordered_json> rows;
  for (const std::string& f : files) {
    const size_t before = rows.size();
    const std::string ext = extension_of(f);
    if (ext == ".jsonl") {
      append_jsonl_objects(read_text_file(f), f, rows);  // keys kept in the file's order
    } else if (ext == ".parquet") {
      JsonRowBuilderT<ordered_json> builder(rows);
      read_parquet(f, builder);
    } else if (ext == ".arrow") {
      JsonRowBuilderT<ordered_json> builder(rows);
      read_arrow_ipc(f, builder);
    } else {
      throw Error(fmt::format("{}: dataset rows are read from .arrow, .parquet or .jsonl files, not '{}'", f, ext));
    }
    if (sizes) sizes->push_back(rows.size() - before);
  }
  return rows;
}

std::string dataset_row_where(const std::vector<std::string>& files, const std::vector<size_t>& sizes, size_t index) {
  for (size_t k = 0; k < files.size() && k < sizes.size(); ++k) {
    if (index < sizes[k]) {
      if (extension_of(files[k]) == ".jsonl") return fmt::format("{} line {}", files[k], index + 1);
      return fmt::format("{} row {}", files[k], index);
    }
    index -= sizes[k];
  }
  return fmt::format("row {} past the end of the files", index);
}

nlohmann::json sorted_json(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::object: {
      nlohmann::json o = nlohmann::json::object();
      for (auto it = v.begin(); it != v.end(); ++it) o[it.key()] = sorted_json(it.value());
      return o;
    }
    case ordered_json::value_t::array: {
      nlohmann::json a = nlohmann::json::array();
      for (const ordered_json& e : v) a.push_back(sorted_json(e));
      return a;
    }
    case ordered_json::value_t::string: return v.get<std::string>();
    case ordered_json::value_t::boolean: return v.get<bool>();
    case ordered_json::value_t::number_integer: return v.get<int64_t>();
    case ordered_json::value_t::number_unsigned: return v.get<uint64_t>();
    case ordered_json::value_t::number_float: return v.get<double>();
    default: return nullptr;
  }
}

}  // namespace foxeval
