#include "data/python/str_strip.h"

#include "data/python/unicode.h"
#include "data/utf8.h"

namespace foxeval {

namespace {

// The byte offset after the leading whitespace of `s`.
std::size_t lstrip_begin(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp = 0;
    std::size_t bad = 0;
    const std::size_t n = utf8::decode_one(s, i, &cp, &bad);
    if (n == 0 || !py_isspace(cp)) break;  // a bad byte is not whitespace
    i += n;
  }
  return i;
}

}  // namespace

std::size_t py_rstrip_size(std::string_view s) {
  // Characters are decoded from the start (a UTF-8 sequence cannot be found reliably from its end
  // once bad bytes are about); the end is after the last one that is not whitespace.
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    std::size_t bad = 0;
    std::size_t n = utf8::decode_one(s, i, &cp, &bad);
    const bool space = n != 0 && py_isspace(cp);
    if (n == 0) n = bad;
    i += n;
    if (!space) end = i;
  }
  return end;
}

std::string py_lstrip(std::string_view s) { return std::string(s.substr(lstrip_begin(s))); }

std::string py_rstrip(std::string_view s) { return std::string(s.substr(0, py_rstrip_size(s))); }

std::string py_strip(std::string_view s) {
  const std::size_t begin = lstrip_begin(s);
  return py_rstrip(s.substr(begin));
}

std::u32string py_strip(const std::u32string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && py_isspace(s[b])) ++b;
  while (e > b && py_isspace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace foxeval
