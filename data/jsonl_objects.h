// JSON lines of objects, as benchmark data comes: the one parser behind data/records.h
// (nlohmann::json) and data/dataset_rows.h (ordered_json, keys in the file's order).
#pragma once
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

// Appends every line of `text` (the contents of `path`, named in errors) to `rows`, each one JSON
// object. A blank line is an error, so that row i is line i + 1; only the final newline may end the
// text; CRLF line ends are accepted.
template <typename Json>
void append_jsonl_objects(const std::string& text, const std::string& path, std::vector<Json>& rows) {
  size_t begin = 0;
  for (size_t line_no = 1; begin < text.size(); ++line_no) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t\r\f\v") == std::string_view::npos)
      throw Error(fmt::format("{} line {}: blank line (every line must be one JSON object)", path, line_no));
    check_json_depth(line, fmt::format("{} line {}", path, line_no));  // readers walk records recursively
    Json record;
    try {
      record = Json::parse(line);
    } catch (const typename Json::parse_error& e) {
      throw Error(fmt::format("{} line {}: not valid JSON ({})", path, line_no, e.what()));
    }
    if (!record.is_object())
      throw Error(fmt::format("{} line {}: a record must be a JSON object, not {}", path, line_no, record.type_name()));
    rows.push_back(std::move(record));
  }
}

}  // namespace foxeval
