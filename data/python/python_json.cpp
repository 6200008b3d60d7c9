#include "data/python/python_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

namespace {

std::optional<double> named_float(const std::string& name) {
  if (name == "Infinity") return std::numeric_limits<double>::infinity();
  if (name == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (name == "NaN") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

bool starts_with_at(const std::string& s, size_t i, const char* token) {
  return s.compare(i, std::char_traits<char>::length(token), token) == 0;
}

// Rewrites the bare tokens as {"__float__": "..."} so that nlohmann can parse the text; the
// line structure is kept, so nlohmann's line numbers still point into the file.
std::string quote_bare_floats(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];  // an escaped quote does not end it
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      if (starts_with_at(text, i, token)) {
        out += fmt::format("{{\"__float__\": \"{}\"}}", token);
        i += std::char_traits<char>::length(token) - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

void decode_floats(nlohmann::json& j) {
  if (j.is_object()) {
    if (auto f = python_float(j)) {
      j = *f;
      return;
    }
    for (auto& item : j.items()) decode_floats(item.value());
  } else if (j.is_array()) {
    for (auto& item : j) decode_floats(item);
  }
}

}  // namespace

std::optional<double> python_float(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_object() && value.size() == 1 && value.contains("__float__") && value.at("__float__").is_string())
    return named_float(value.at("__float__").get<std::string>());
  return std::nullopt;
}

nlohmann::json parse_python_json(const std::string& text, const std::string& source) {
  check_json_depth(text, source);  // decode_floats recurses
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(quote_bare_floats(text));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", source, e.what()));
  }
  decode_floats(j);
  return j;
}

nlohmann::json read_python_json(const std::string& path) { return parse_python_json(read_text_file(path), path); }

}  // namespace foxeval
