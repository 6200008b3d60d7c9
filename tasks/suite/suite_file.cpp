#include "tasks/suite/suite_file.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval::suite {
namespace {

// A var declared without a value (`vars: {data: null}`): each use needs --set.
const std::string kNoValue = std::string("\0unset", 6);

// A plain (unquoted) YAML scalar typed as YAML 1.2's core schema types it; quoted ones stay strings.
nlohmann::json scalar_value(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted
  // RE2, not std::regex: a suite file is the user's text, and std::regex recurses per character
  // (a scalar of 300k digits overflowed the stack).
  static const RE2 integer("[-+]?[0-9]+"), number("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  try {
    if (RE2::FullMatch(s, integer)) return std::stoll(s);
    if (RE2::FullMatch(s, number)) return std::stod(s);
  } catch (const std::out_of_range&) {
    // beyond int64/double: kept as text, and the field's reader names it
  }
  return s;
}

nlohmann::json convert(const YAML::Node& node, const std::string& pointer, SourceLines& lines) {
  lines.lines[pointer] = node.Mark().line + 1;
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_value(node);
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (size_t i = 0; i < node.size(); ++i) a.push_back(convert(node[i], pointer + "/" + std::to_string(i), lines));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          throw Error(fmt::format("{}:{}: a key must be a plain name", lines.file, kv.first.Mark().line + 1));
        const std::string key = kv.first.Scalar();
        if (o.contains(key))
          throw Error(fmt::format("{}:{}: '{}' is given twice", lines.file, kv.first.Mark().line + 1, key));
        o[key] = convert(kv.second, pointer + "/" + escape_pointer(key), lines);
        lines.lines[pointer + "/" + escape_pointer(key)] = kv.first.Mark().line + 1;
      }
      return o;
    }
    case YAML::NodeType::Undefined:
      break;
  }
  throw Error(fmt::format("{}:{}: an undefined YAML node", lines.file, node.Mark().line + 1));
}

}  // namespace

std::string SourceLines::at(const std::string& pointer, const std::string& where) const {
  std::string p = pointer;
  for (;;) {
    auto it = lines.find(p);
    if (it != lines.end()) return fmt::format("{}:{}: {}", file, it->second, where);
    if (p.empty()) return fmt::format("{}: {}", file, where);
    p = p.substr(0, p.rfind('/'));
  }
}

SuiteText parse_suite_text(const std::string& text, const std::string& file, bool json) {
  SuiteText out;
  out.source.file = file;
  if (json) {
    try {
      out.value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      // The byte offset as a line, as the YAML errors give it.
      const size_t upto = std::min<size_t>(e.byte, text.size());
      const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n'));
      throw Error(fmt::format("{}:{}: not valid JSON ({})", file, line, e.what()));
    }
    // The lines of the fields, from the same text read as YAML (JSON is YAML's flow style); a file
    // YAML cannot read keeps no lines, and its errors name the field alone.
    try {
      SourceLines lines{file, {}};
      convert(YAML::Load(text), "", lines);
      out.source = lines;
    } catch (const std::exception&) {
    }
  } else {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw Error(fmt::format("{}:{}: not valid YAML ({})", file, e.mark.line + 1, e.msg));
    }
    out.value = convert(root, "", out.source);
  }
  if (!out.value.is_object()) throw Error(fmt::format("{}: a suite file is a mapping (models:, tasks:, ...)", file));
  return out;
}

SuiteText read_suite_text(const std::string& path) {
  const std::string text = read_text_file(path);
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return parse_suite_text(text, path, json);
}

namespace {

void substitute(nlohmann::json& v, const std::string& pointer, const std::map<std::string, std::string>& vars,
                const SourceLines& source) {
  if (v.is_object()) {
    for (auto& [k, child] : v.items()) substitute(child, pointer + "/" + escape_pointer(k), vars, source);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) substitute(v[i], pointer + "/" + std::to_string(i), vars, source);
  } else if (v.is_string()) {
    std::string s = v.get<std::string>(), out;
    size_t i = 0;
    while (i < s.size()) {
      const size_t open = s.find("${", i);
      if (open == std::string::npos) break;
      const size_t close = s.find('}', open);
      if (close == std::string::npos)
        throw Error(source.at(pointer, fmt::format("'{}': '${{' without its '}}'", s)));
      const std::string name = s.substr(open + 2, close - open - 2);
      auto it = vars.find(name);
      if (it == vars.end()) {
        std::string known;
        for (const auto& [k, _] : vars) known += (known.empty() ? "" : ", ") + k;
        throw Error(source.at(pointer, fmt::format("'${{{}}}' is not a variable (vars: {}; --set NAME=VALUE adds one)",
                                                   name, known.empty() ? "none" : known)));
      }
      if (it->second == kNoValue)
        throw Error(source.at(pointer, fmt::format("'${{{}}}' has no value in this file: give --set {}=VALUE", name, name)));
      out += s.substr(i, open - i) + it->second;
      i = close + 1;
    }
    if (i > 0) v = out + s.substr(i);
  }
}

}  // namespace

void substitute_vars(SuiteText& suite, const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> vars;
  if (suite.value.contains("vars")) {
    const nlohmann::json& v = suite.value["vars"];
    if (!v.is_object()) throw Error(suite.source.at("/vars", "vars: a mapping of NAME: VALUE"));
    for (const auto& [k, val] : v.items()) {
      if (val.is_null())
        vars[k] = kNoValue;  // to be given with --set
      else if (val.is_string())
        vars[k] = val.get<std::string>();
      else if (val.is_number() || val.is_boolean())
        vars[k] = val.dump();
      else
        throw Error(suite.source.at("/vars/" + escape_pointer(k), fmt::format("vars.{}: a text or a number", k)));
    }
  }
  for (const auto& [k, v] : overrides) vars[k] = v;
  for (auto& [k, child] : suite.value.items())
    if (k != "vars") substitute(child, "/" + escape_pointer(k), vars, suite.source);
}

std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace foxeval::suite
