#include "tasks/longbench/longbench_prompts.h"

#include <fmt/format.h>

#include "data/errors.h"
#include "data/tokenizer.h"
#include "data/python/json_escape.h"

namespace foxeval::longbench {

std::string format_template(const std::string& tmpl, const nlohmann::json& fields, const std::string& what) {
  std::string out;
  out.reserve(tmpl.size());
  size_t i = 0;
  while (i < tmpl.size()) {
    const char c = tmpl[i];
    if (c == '}') {
      if (i + 1 < tmpl.size() && tmpl[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      throw Error(fmt::format("{}: single '}}' at character {} of the template", what, i));
    }
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < tmpl.size() && tmpl[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    const size_t close = tmpl.find('}', i + 1);
    if (close == std::string::npos) throw Error(fmt::format("{}: single '{{' at character {} of the template", what, i));
    const std::string name = tmpl.substr(i + 1, close - i - 1);
    if (name.empty())
      throw Error(fmt::format("{}: positional field '{{}}' at character {} (templates name the record's fields)", what, i));
    if (name.find_first_of("!:.[]{") != std::string::npos)
      throw Error(fmt::format("{}: field '{{{}}}': conversions, format specs and attribute/index access are not supported",
                              what, name));
    if (!fields.contains(name)) throw Error(fmt::format("{}: the template's field '{}' is not in the record", what, name));
    const nlohmann::json& v = fields[name];
    if (v.is_string())
      out += v.get_ref<const std::string&>();
    else if (v.is_number_integer())
      out += v.dump();
    else
      throw Error(fmt::format("{}: field '{}' is {}; only strings and integers can fill a template", what, name, v.type_name()));
    i = close + 1;
  }
  return out;
}

std::vector<int64_t> prompt_ids(const Gpt2Tokenizer& tok, const std::string& prompt, int64_t max_length) {
  if (max_length < 2) throw Error(fmt::format("--max-length {} must be at least 2", max_length));
  std::vector<int64_t> ids = tok.encode(prompt, /*add_bos=*/true, /*json_escape=*/true);
  if (static_cast<int64_t>(ids.size()) <= max_length) return ids;
  const auto half = static_cast<std::ptrdiff_t>(max_length / 2);
  const std::vector<int64_t> head(ids.begin(), ids.begin() + half), tail(ids.end() - half, ids.end());
  // decode(ids[:half]) + decode(ids[-half:]), then json.dumps for the new tokenization, done on the
  // escaped text so that a surrogate split by the cut survives as in Python (python_reescape in data/python/json_escape.h).
  const std::string escaped = python_reescape(tok.decode(head, /*json_unescape=*/false, /*skip_special=*/true)) +
                              python_reescape(tok.decode(tail, /*json_unescape=*/false, /*skip_special=*/true));
  return tok.encode(escaped, /*add_bos=*/true, /*json_escape=*/false);
}

}  // namespace foxeval::longbench
