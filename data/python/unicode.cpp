#include "data/python/unicode.h"

#include <algorithm>

#include "data/errors.h"
#include "data/python/unicode_tables.h"

namespace foxeval {

namespace ut = unicode_tables;

namespace {

bool in_ranges(const ut::CodeRange* ranges, size_t count, char32_t c) {
  const ut::CodeRange* end = ranges + count;
  const ut::CodeRange* it = std::upper_bound(
      ranges, end, static_cast<uint32_t>(c), [](uint32_t v, const ut::CodeRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

char32_t lower_one(char32_t c) {
  const ut::LowerRun* end = ut::kLower + ut::kLowerCount;
  const ut::LowerRun* it = std::upper_bound(
      ut::kLower, end, static_cast<uint32_t>(c), [](uint32_t v, const ut::LowerRun& r) { return v < r.first; });
  if (it == ut::kLower) return c;
  const ut::LowerRun& run = *(it - 1);
  if (c > run.last || (c - run.first) % run.stride != 0) return c;
  return static_cast<char32_t>(static_cast<int64_t>(c) + run.delta);
}

bool case_ignorable(char32_t c) { return in_ranges(ut::kCaseIgnorable, ut::kCaseIgnorableCount, c); }
bool cased(char32_t c) { return in_ranges(ut::kCased, ut::kCasedCount, c); }

// CPython's rule for U+03A3: final (U+03C2) when a cased letter precedes it and none follows,
// skipping case-ignorable characters both ways.
char32_t lower_capital_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  while (j > 0 && case_ignorable(s[j - 1])) --j;
  if (j == 0 || !cased(s[j - 1])) return U'\u03c3';
  size_t k = i + 1;
  while (k < s.size() && case_ignorable(s[k])) ++k;
  return (k == s.size() || !cased(s[k])) ? U'\u03c2' : U'\u03c3';
}

}  // namespace

std::u32string utf8_to_u32(const std::string& text, const std::string& what) {
  std::u32string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char b0 = static_cast<unsigned char>(text[i]);
    int len = 0;
    char32_t c = 0;
    char32_t min = 0;
    if (b0 < 0x80) { len = 1; c = b0; }
    else if ((b0 & 0xE0) == 0xC0) { len = 2; c = b0 & 0x1F; min = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { len = 3; c = b0 & 0x0F; min = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { len = 4; c = b0 & 0x07; min = 0x10000; }
    else throw Error(what + ": invalid UTF-8 at byte " + std::to_string(i));
    if (i + len > text.size()) throw Error(what + ": truncated UTF-8 at byte " + std::to_string(i));
    for (int k = 1; k < len; ++k) {
      const unsigned char b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) throw Error(what + ": invalid UTF-8 at byte " + std::to_string(i));
      c = (c << 6) | (b & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c < 0xE000))
      throw Error(what + ": invalid UTF-8 at byte " + std::to_string(i));
    out.push_back(c);
    i += len;
  }
  return out;
}

std::string u32_to_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

bool py_isspace(char32_t c) { return in_ranges(ut::kSpace, ut::kSpaceCount, c); }
bool py_isalnum(char32_t c) { return in_ranges(ut::kAlnum, ut::kAlnumCount, c); }
bool py_isdecimal(char32_t c) { return in_ranges(ut::kDecimal, ut::kDecimalCount, c); }

std::u32string py_lower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == U'\u0130') {  // the one code point whose lowercase is two: i + combining dot above
      out += U'i';
      out += U'\u0307';
    } else if (c == U'\u03a3') {
      out += lower_capital_sigma(text, i);
    } else {
      out += lower_one(c);
    }
  }
  return out;
}

std::vector<std::u32string> py_split(const std::u32string& text) {
  std::vector<std::u32string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && py_isspace(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && !py_isspace(text[j])) ++j;
    if (j > i) out.emplace_back(text, i, j - i);
    i = j;
  }
  return out;
}

std::vector<std::string> find_decimal_runs(const std::u32string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    if (!py_isdecimal(text[i])) { ++i; continue; }
    size_t j = i;
    while (j < text.size() && py_isdecimal(text[j])) ++j;
    out.push_back(u32_to_utf8(text.substr(i, j - i)));
    i = j;
  }
  return out;
}

}  // namespace foxeval
