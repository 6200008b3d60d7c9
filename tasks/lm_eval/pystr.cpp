#include "tasks/lm_eval/pystr.h"

#include <fmt/format.h>

#include <vector>

#include "data/errors.h"
#include "data/utf8.h"

namespace foxeval::lm_eval {
namespace {

// Documents come from JSON/Parquet and are valid UTF-8; a bad byte is decoded as itself (one
// "code point" of one byte) so that no text is lost or reordered.
struct CodePoint {
  char32_t cp;
  std::size_t begin, size;
};

std::vector<CodePoint> code_points(std::string_view s) {
  std::vector<CodePoint> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    std::size_t bad = 0;
    std::size_t n = utf8::decode_one(s, i, &cp, &bad);
    if (n == 0) cp = utf8::kReplacement, n = bad;
    out.push_back({cp, i, n});
    i += n;
  }
  return out;
}

// Simple (one to one) lower case of the scripts we map; `cp` itself otherwise.
char32_t lower_simple(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7)) return cp + 32;
  if (cp >= 0x100 && cp <= 0x12F) return cp | 1;
  if (cp >= 0x132 && cp <= 0x137) return cp | 1;
  if (cp >= 0x139 && cp <= 0x148) return (cp % 2 == 1) ? cp + 1 : cp;
  if (cp >= 0x14A && cp <= 0x177) return cp | 1;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x179 && cp <= 0x17E) return (cp % 2 == 1) ? cp + 1 : cp;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 63;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  return cp;
}

char32_t upper_simple(char32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
  if (cp == 0xFF) return 0x178;
  if (cp == 0xB5) return 0x39C;
  if (cp >= 0x100 && cp <= 0x12F) return cp & ~char32_t{1};
  if (cp == 0x131) return 'I';
  if (cp >= 0x132 && cp <= 0x137) return cp & ~char32_t{1};
  if (cp >= 0x139 && cp <= 0x148) return (cp % 2 == 0) ? cp - 1 : cp;
  if (cp >= 0x14A && cp <= 0x177) return cp & ~char32_t{1};
  if (cp >= 0x179 && cp <= 0x17E) return (cp % 2 == 0) ? cp - 1 : cp;
  if (cp == 0x17F) return 'S';
  if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
  if (cp == 0x3C2) return 0x3A3;
  if (cp == 0x3AC) return 0x386;
  if (cp >= 0x3AD && cp <= 0x3AF) return cp - 37;
  if (cp == 0x3CC) return 0x38C;
  if (cp == 0x3CD || cp == 0x3CE) return cp - 63;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  return cp;
}

// Full lower/title case where Python's differs from the simple mapping.
void append_lower(std::string& out, char32_t cp) {
  if (cp == 0x130) {  // İ -> i + COMBINING DOT ABOVE
    out += 'i';
    utf8::append(out, 0x307);
    return;
  }
  utf8::append(out, lower_simple(cp));
}

void append_title(std::string& out, char32_t cp) {
  if (cp == 0xDF) {  // ß -> Ss
    out += "Ss";
    return;
  }
  if (cp == 0x149) {  // ŉ -> ʼN
    utf8::append(out, 0x2BC);
    out += 'N';
    return;
  }
  utf8::append(out, upper_simple(cp));
}

}  // namespace

const char* const kPySpaceClass =
    "[\\t\\n\\x{0B}\\f\\r \\x{1C}-\\x{1F}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}]";

bool is_py_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || (cp >= 0x1C && cp <= 0x1F) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

std::string py_lstrip(std::string_view s) {
  for (const CodePoint& c : code_points(s))
    if (!is_py_space(c.cp)) return std::string(s.substr(c.begin));
  return "";
}

std::string py_rstrip(std::string_view s) {
  const std::vector<CodePoint> cps = code_points(s);
  for (auto it = cps.rbegin(); it != cps.rend(); ++it)
    if (!is_py_space(it->cp)) return std::string(s.substr(0, it->begin + it->size));
  return "";
}

std::string py_strip(std::string_view s) { return py_rstrip(py_lstrip(s)); }

std::string py_replace(std::string_view s, std::string_view from, std::string_view to) {
  if (from.empty()) throw Error("internal: py_replace with an empty pattern");
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  for (;;) {
    const std::size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

int64_t py_len(std::string_view s) { return static_cast<int64_t>(code_points(s).size()); }

std::string py_drop_last(std::string_view s) {
  const std::vector<CodePoint> cps = code_points(s);
  if (cps.empty()) return "";
  return std::string(s.substr(0, cps.back().begin));
}

std::string py_lower_first(std::string_view s) {
  const std::vector<CodePoint> cps = code_points(s);
  if (cps.empty()) throw Error("empty string where the task takes its first character (Python: IndexError)");
  std::string out;
  append_lower(out, cps[0].cp);
  out.append(s.substr(cps[0].size));
  return out;
}

std::string py_capitalize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool first = true;
  for (const CodePoint& c : code_points(s)) {
    if (first)
      append_title(out, c.cp);
    else
      append_lower(out, c.cp);
    first = false;
  }
  return out;
}

int64_t py_split_whitespace_count(std::string_view s) {
  int64_t runs = 0;
  bool in_space = false;
  for (const CodePoint& c : code_points(s)) {
    const bool sp = is_py_space(c.cp);
    if (sp && !in_space) ++runs;
    in_space = sp;
  }
  return runs + 1;
}

}  // namespace foxeval::lm_eval
