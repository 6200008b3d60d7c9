// JSON escaping as Python's json module does it; see json_escape.h for the exact contract.
#include "data/python/json_escape.h"

#include <string>
#include <vector>

#include "data/errors.h"
#include "data/python/json_short_escape.h"
#include "data/utf8.h"

namespace foxeval {
namespace {

const char kHex[] = "0123456789abcdef";

// The one-character escapes of a decoder, as pairs: the letter after the backslash, then the
// character it stands for.
constexpr std::string_view kJsonEscapes("\"\"\\\\//b\bf\fn\nr\rt\t");           // json.loads
constexpr std::string_view kUnicodeEscapes("\\\\''\"\"b\bf\ft\tn\nr\rv\va\a");  // unicode_escape

// Whether `e` is one of `pairs`' letters; then its character goes to cps.
bool one_char_escape(std::string_view pairs, char e, std::u32string& cps) {
  for (std::size_t k = 0; k + 1 < pairs.size(); k += 2)
    if (pairs[k] == e) {
      cps.push_back(static_cast<unsigned char>(pairs[k + 1]));
      return true;
    }
  return false;
}

void append_u16(std::string& out, unsigned v) {
  out += "\\u";
  out.push_back(kHex[(v >> 12) & 0xF]);
  out.push_back(kHex[(v >> 8) & 0xF]);
  out.push_back(kHex[(v >> 4) & 0xF]);
  out.push_back(kHex[v & 0xF]);
}

// json.dumps' ensure_ascii form of one code point; a surrogate (lone or not) as its own \\uXXXX.
void append_escaped(std::string& out, char32_t c) {
  if (const char* e = json_short_escape(c)) {
    out += e;
    return;
  }
  if (c >= 0x20 && c < 0x7F) {
    out.push_back(static_cast<char>(c));
    return;
  }
  if (c >= 0x10000) {  // a UTF-16 surrogate pair, as json.dumps writes astral characters
    append_u16(out, 0xD800 + ((c - 0x10000) >> 10));
    append_u16(out, 0xDC00 + ((c - 0x10000) & 0x3FF));
  } else {
    append_u16(out, c);  // other controls, DEL and every non-ASCII character
  }
}


// Reads `n` hex digits at s[i..]; -1 when one is missing or not hex.
long read_hex(std::string_view s, std::size_t i, int n) {
  if (i + n > s.size()) return -1;
  long v = 0;
  for (int k = 0; k < n; ++k) {
    const int h = hex_digit(s[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// Code points (possibly with surrogates, as a Python str may hold) to UTF-8: a high surrogate
// directly followed by a low one is joined, any other surrogate becomes U+FFFD.
std::string to_utf8(const std::u32string& cps) {
  std::string out;
  out.reserve(cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < cps.size() && cps[i + 1] >= 0xDC00 &&
        cps[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (cps[i + 1] - 0xDC00);
      ++i;
    }
    utf8::append(out, c);  // lone surrogates -> U+FFFD there
  }
  return out;
}

}  // namespace

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8 + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {  // printable ASCII: the common case
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    char32_t cp = c;
    std::size_t n = 1, bad;
    if (c >= 0x80) {
      n = utf8::decode_one(s, i, &cp, &bad);
      if (n == 0) throw Error("text is not valid UTF-8 (byte offset " + std::to_string(i) + ")");
    }
    append_escaped(out, cp);
    i += n;
  }
  return out;
}

namespace {

// Mirrors CPython's C scanstring with strict=True on the string body. Surrogates stay as they
// are (a Python str keeps them; to_utf8 joins pairs).
bool json_loads_cps(std::string_view s, std::u32string& cps) {
  cps.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c < 0x20) return false;  // "Extra data" / "Invalid control character"
    if (c >= 0x80) {
      char32_t cp;
      std::size_t bad;
      const std::size_t n = utf8::decode_one(s, i, &cp, &bad);
      if (n == 0) return false;
      cps.push_back(cp);
      i += n;
      continue;
    }
    if (c != '\\') {
      cps.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) return false;  // the backslash would escape the closing quote
    const char e = s[i + 1];
    i += 2;
    if (one_char_escape(kJsonEscapes, e, cps)) continue;
    if (e != 'u') return false;  // "Invalid \\escape"
    const long v = read_hex(s, i, 4);
    if (v < 0) return false;
    i += 4;
    cps.push_back(static_cast<char32_t>(v));
  }
  return true;
}

// Mirrors CPython's _PyUnicode_DecodeUnicodeEscapeInternal with errors="ignore": a bad escape is
// skipped up to the character that made it bad, and decoding resumes there.
std::u32string unicode_escape_cps(std::string_view s) {
  std::u32string cps;
  cps.reserve(s.size());
  std::size_t i = 0;
  const std::size_t end = s.size();
  while (i < end) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c != '\\') {
      cps.push_back(c);  // every other byte is read as Latin-1
      ++i;
      continue;
    }
    if (i + 1 >= end) break;  // "\ at end of string": ignored
    const char e = s[i + 1];
    i += 2;
    if (one_char_escape(kUnicodeEscapes, e, cps)) continue;
    switch (e) {
      case '\n': break;  // line continuation
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        char32_t v = static_cast<char32_t>(e - '0');
        for (int k = 0; k < 2 && i < end && s[i] >= '0' && s[i] <= '7'; ++k, ++i)
          v = (v << 3) + static_cast<char32_t>(s[i] - '0');
        cps.push_back(v);
        break;
      }
      case 'x': case 'u': case 'U': {
        const int count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        unsigned long v = 0;
        int k = 0;
        for (; k < count && i < end; ++k, ++i) {
          const int h = hex_digit(s[i]);
          if (h < 0) break;
          v = v * 16 + static_cast<unsigned long>(h);
        }
        // Complete and in range: emit. Otherwise the escape so far is dropped and decoding
        // resumes at the offending character (already where i points).
        if (k == count && v <= 0x10FFFF) cps.push_back(static_cast<char32_t>(v));
        break;
      }
      case 'N': {
        // \N{name}: unknown names (all of them, here) are skipped through the closing brace;
        // a missing brace drops the rest of the text, as CPython's "incomplete" path does.
        if (i >= end) break;
        if (s[i] != '{') break;
        const std::size_t close = s.find('}', i + 1);
        if (close == std::string_view::npos) {
          i = end;
        } else if (close == i + 1) {
          i = close;  // "\N{}": the error stops before '}', which is then copied
        } else {
          i = close + 1;
        }
        break;
      }
      default:  // unknown escape: kept verbatim, backslash included
        cps.push_back('\\');
        cps.push_back(static_cast<unsigned char>(e));
    }
  }
  return cps;
}

// json.loads('"' + raw + '"'), else the unicode_escape fallback: the Python str the official
// decode gives, lone surrogates included.
std::u32string python_decode_cps(std::string_view raw) {
  std::u32string cps;
  if (json_loads_cps(raw, cps)) return cps;
  return unicode_escape_cps(raw);
}

}  // namespace

bool json_unescape_strict(std::string_view text, std::string* out) {
  std::u32string cps;
  if (!json_loads_cps(text, cps)) return false;
  *out = to_utf8(cps);
  return true;
}

std::string unicode_escape_decode(std::string_view bytes) { return to_utf8(unicode_escape_cps(bytes)); }

std::string python_reescape(std::string_view raw) {
  const std::u32string cps = python_decode_cps(raw);
  std::string out;
  out.reserve(cps.size() + 16);
  for (char32_t c : cps) append_escaped(out, c);
  return out;
}

std::string json_unescape(std::string_view text) {
  std::string out;
  if (json_unescape_strict(text, &out)) return out;
  return unicode_escape_decode(text);
}

}  // namespace foxeval
