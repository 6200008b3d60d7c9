#include "data/python/json_dumps.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "data/python/json_short_escape.h"
#include "data/python/numbers.h"

namespace foxeval {
namespace {

template <typename Json>
void dump(const Json& v, int indent, int level, std::string& out) {
  const auto newline = [&](int l) {
    out += '\n';
    out.append(static_cast<size_t>(indent * l), ' ');
  };
  switch (v.type()) {
    case Json::value_t::object:
    case Json::value_t::array: {
      const bool object = v.is_object();
      if (v.empty()) {
        out += object ? "{}" : "[]";
        return;
      }
      out += object ? '{' : '[';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += indent >= 0 ? "," : ", ";
        first = false;
        if (indent >= 0) newline(level + 1);
        if (object) out += python_json_string(it.key()) + ": ";
        dump(it.value(), indent, level + 1, out);
      }
      if (indent >= 0) newline(level);
      out += object ? '}' : ']';
      return;
    }
    case Json::value_t::string: out += python_json_string(v.template get_ref<const std::string&>()); return;
    case Json::value_t::boolean: out += v.template get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer: out += std::to_string(v.template get<int64_t>()); return;
    case Json::value_t::number_unsigned: out += std::to_string(v.template get<uint64_t>()); return;
    case Json::value_t::number_float: {
      const double x = v.template get<double>();
      // json's floatstr: repr, with the non-finite values as JavaScript names (allow_nan=True).
      if (std::isnan(x)) out += "NaN";
      else if (std::isinf(x)) out += x > 0 ? "Infinity" : "-Infinity";
      else out += python_float_repr(x);
      return;
    }
    default: out += "null"; return;
  }
}

}  // namespace

std::string python_json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {  // UTF-8 bytes >= 0x80 pass through: ensure_ascii=False
    if (const char* e = json_short_escape(c)) out += e;
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string python_json_dumps(const nlohmann::json& value, int indent) {
  std::string out;
  dump(value, indent, 0, out);
  return out;
}

std::string python_json_dumps(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  dump(value, indent, 0, out);
  return out;
}

nlohmann::ordered_json to_ordered_json(const nlohmann::json& v) {
  if (v.is_object()) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (auto it = v.begin(); it != v.end(); ++it) o[it.key()] = to_ordered_json(it.value());
    return o;
  }
  if (v.is_array()) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const nlohmann::json& e : v) a.push_back(to_ordered_json(e));
    return a;
  }
  switch (v.type()) {  // scalars as they are (a dump and re-parse would turn NaN and inf into null)
    case nlohmann::json::value_t::string: return v.get_ref<const std::string&>();
    case nlohmann::json::value_t::boolean: return v.get<bool>();
    case nlohmann::json::value_t::number_integer: return v.get<int64_t>();
    case nlohmann::json::value_t::number_unsigned: return v.get<uint64_t>();
    case nlohmann::json::value_t::number_float: return v.get<double>();
    default: return nullptr;
  }
}

}  // namespace foxeval
