#include "tasks/lm_eval/pystr.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "data/errors.h"
#include "data/utf8.h"
#include "data/python/case_tables.h"
#include "data/python/unicode.h"  // py_lower: CPython's str.lower(), the project's one lowercase

namespace foxeval::lm_eval {
namespace {

namespace ct = case_tables;

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

// Case mapping works on code points; a byte that is not UTF-8 is U+FFFD there, as it would be in
// the str that Python's decode(errors="replace") makes.
std::u32string to_u32(std::string_view s) {
  std::u32string out;
  for (const CodePoint& c : code_points(s)) out += c.cp;
  return out;
}

char32_t map_runs(const ct::CaseRun* runs, std::size_t count, char32_t c) {
  const ct::CaseRun* it = std::upper_bound(runs, runs + count, static_cast<uint32_t>(c),
                                           [](uint32_t v, const ct::CaseRun& r) { return v < r.first; });
  if (it == runs) return c;
  const ct::CaseRun& run = *(it - 1);
  if (c > run.last || (c - run.first) % run.stride != 0) return c;
  return static_cast<char32_t>(static_cast<int64_t>(c) + run.delta);
}

// CPython's _PyUnicode_ToUpperFull (title false) or _PyUnicode_ToTitleFull (title true) of c.
void append_upper_or_title(std::u32string& out, char32_t c, bool title) {
  const ct::FullCase* end = ct::kSpecial + ct::kSpecialCount;
  const ct::FullCase* it = std::lower_bound(ct::kSpecial, end, static_cast<uint32_t>(c),
                                            [](const ct::FullCase& f, uint32_t v) { return f.cp < v; });
  if (it != end && it->cp == c) {
    const uint32_t* m = title ? it->title : it->upper;
    for (int k = 0; k < 3 && m[k] != 0; ++k) out += static_cast<char32_t>(m[k]);
    return;
  }
  out += title ? map_runs(ct::kTitle, ct::kTitleCount, c) : map_runs(ct::kUpper, ct::kUpperCount, c);
}

}  // namespace

const char* const kPySpaceClass =
    "[\\t\\n\\x{0B}\\f\\r \\x{1C}-\\x{1F}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}]";


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

std::string py_lower(std::string_view s) { return foxeval::u32_to_utf8(foxeval::py_lower(to_u32(s))); }

std::string py_upper(std::string_view s) {
  std::u32string out;
  for (char32_t c : to_u32(s)) append_upper_or_title(out, c, false);  // do_upper: no context
  return foxeval::u32_to_utf8(out);
}

std::string py_lower_first(std::string_view s) {
  const std::vector<CodePoint> cps = code_points(s);
  if (cps.empty()) throw Error("empty string where the task takes its first character (Python: IndexError)");
  // s[0] is a string of its own: a capital sigma there has no context (-> U+03C3).
  return foxeval::u32_to_utf8(foxeval::py_lower(std::u32string(1, cps[0].cp))) + std::string(s.substr(cps[0].size));
}

// CPython's do_capitalize (3.8+): _PyUnicode_ToTitleFull of the first character, then lower_ucs4
// of each later one, whose Final_Sigma test (handle_capital_sigma) reads the original string,
// first character included. Only U+0130's lowercase is longer than one code point and Final_Sigma
// never changes a length, so the first character's share of py_lower(whole) is its lowercase alone.
std::string py_capitalize(std::string_view s) {
  const std::u32string text = to_u32(s);
  if (text.empty()) return "";
  std::u32string out;
  append_upper_or_title(out, text[0], true);
  const std::u32string lower = foxeval::py_lower(text);
  out.append(lower, foxeval::py_lower(text.substr(0, 1)).size(), std::u32string::npos);
  return foxeval::u32_to_utf8(out);
}

int64_t py_split_whitespace_count(std::string_view s) {
  int64_t runs = 0;
  bool in_space = false;
  for (const CodePoint& c : code_points(s)) {
    const bool sp = py_isspace(c.cp);
    if (sp && !in_space) ++runs;
    in_space = sp;
  }
  return runs + 1;
}

}  // namespace foxeval::lm_eval
