// Small UTF-8 helpers shared by the tokenizer and the JSON escaping: strict decoding (prompts
// must be valid UTF-8), Python-style lenient decoding (bytes.decode("utf-8", "replace"), which is
// what the official GPT-2 tokenizer does on decode), and encoding one code point.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace foxeval::utf8 {

constexpr char32_t kReplacement = 0xFFFD;

// Appends code point `cp` as UTF-8. Surrogates (U+D800..U+DFFF) cannot be represented in valid
// UTF-8; callers replace them first (see json_escape.cpp), here they become U+FFFD.
inline void append(std::string& out, char32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) cp = kReplacement;
  if (cp > 0x10FFFF) cp = kReplacement;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes one code point at s[i]. Returns the number of bytes it spans (>= 1) and stores the
// code point in *cp, or returns 0 when s[i..] does not start a well-formed sequence; then
// *bad_len is the length of the "maximal subpart" (Unicode 3.9 / W3C), which is what CPython's
// "replace" handler turns into one U+FFFD each.
inline std::size_t decode_one(std::string_view s, std::size_t i, char32_t* cp, std::size_t* bad_len) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c0 = b(i);
  *bad_len = 1;
  if (c0 < 0x80) {
    *cp = c0;
    return 1;
  }
  std::size_t need;
  char32_t value;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    need = 1, value = c0 & 0x1F;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    need = 2, value = c0 & 0x0F;
    if (c0 == 0xE0) lo = 0xA0;  // overlong
    if (c0 == 0xED) hi = 0x9F;  // surrogates
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    need = 3, value = c0 & 0x07;
    if (c0 == 0xF0) lo = 0x90;  // overlong
    if (c0 == 0xF4) hi = 0x8F;  // > U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    const unsigned char ck = b(i + k);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (ck < l || ck > h) return 0;
    value = (value << 6) | (ck & 0x3F);
    *bad_len = k + 1;
  }
  *cp = value;
  return need + 1;
}

// Offset of the first byte that is not part of well-formed UTF-8, or npos when all is valid.
inline std::size_t first_invalid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    char32_t cp;
    std::size_t bad;
    const std::size_t n = decode_one(s, i, &cp, &bad);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// bytes.decode("utf-8", errors="replace"): each maximal ill-formed subpart becomes one U+FFFD.
inline std::string sanitize(std::string_view s) {
  if (first_invalid(s) == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    std::size_t bad;
    const std::size_t n = decode_one(s, i, &cp, &bad);
    if (n == 0) {
      append(out, kReplacement);
      i += bad;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace foxeval::utf8
