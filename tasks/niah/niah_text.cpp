#include "tasks/niah/niah_text.h"

#include <fmt/format.h>

#include "data/utf8.h"

namespace foxeval::niah {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Up to `count` hex digits at s[i]; returns how many were read, the value in *v.
size_t read_hex(std::string_view s, size_t i, size_t count, uint32_t* v) {
  size_t k = 0;
  *v = 0;
  for (; k < count && i + k < s.size(); ++k) {
    const int h = hex_digit(s[i + k]);
    if (h < 0) break;
    *v = *v * 16 + static_cast<uint32_t>(h);
  }
  return k;
}

// json.loads of the string body with strict=True (CPython's scanstring). Surrogates stay as they
// are: pairs need no joining because json.dumps writes a pair and an astral character alike.
bool json_loads_body(std::string_view s, std::u32string* out) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c < 0x20) return false;  // the string would end early / a raw control character
    if (c >= 0x80) {
      char32_t cp;
      size_t bad;
      const size_t n = utf8::decode_one(s, i, &cp, &bad);
      if (n == 0) return false;
      out->push_back(cp);
      i += n;
      continue;
    }
    if (c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) return false;  // a trailing backslash escapes the closing quote
    const char e = s[i + 1];
    i += 2;
    switch (e) {
      case '"': case '\\': case '/': out->push_back(static_cast<char32_t>(e)); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t v;
        if (read_hex(s, i, 4, &v) != 4) return false;
        out->push_back(v);
        i += 4;
        break;
      }
      default: return false;
    }
  }
  return true;
}

// bytes.decode("unicode_escape", "ignore"): bytes as Latin-1, Python's escapes; a bad escape is
// dropped up to the character that made it bad; unknown escapes stay as they are.
std::u32string unicode_escape_ignore(std::string_view s) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) break;  // "\\ at end of string"
    const char e = s[i + 1];
    i += 2;
    switch (e) {
      case '\n': break;
      case '\\': case '\'': case '"': out.push_back(static_cast<char32_t>(e)); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        uint32_t v = static_cast<uint32_t>(e - '0');
        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k, ++i) v = v * 8 + (s[i] - '0');
        out.push_back(v);
        break;
      }
      case 'x': case 'u': case 'U': {
        const size_t count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t v;
        const size_t k = read_hex(s, i, count, &v);
        i += k;
        if (k == count && v <= 0x10FFFF) out.push_back(v);
        break;
      }
      case 'N': {
        // \N{name}: no name database here; the escape is skipped (the JSON-escaped haystack only
        // holds "\\N", an escaped backslash, so this needs a cut inside an escape pair).
        if (i >= s.size() || s[i] != '{') break;
        const size_t close = s.find('}', i + 1);
        i = close == std::string_view::npos ? s.size() : (close == i + 1 ? close : close + 1);
        break;
      }
      default:
        out.push_back('\\');
        out.push_back(static_cast<unsigned char>(e));
    }
  }
  return out;
}

void append_u16(std::string& out, uint32_t unit) { out += fmt::format("\\u{:04x}", unit); }

// json.dumps(str)[1:-1] with ensure_ascii=True.
std::string json_dumps_body(const std::u32string& cps) {
  std::string out;
  out.reserve(cps.size() + 16);
  for (char32_t c : cps) {
    if (c >= 0x20 && c < 0x7F) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x10000) {
      append_u16(out, 0xD800 + ((c - 0x10000) >> 10));
      append_u16(out, 0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      append_u16(out, c);
    }
  }
  return out;
}

}  // namespace

std::string python_reescape(std::string_view raw) {
  std::u32string cps;
  if (!json_loads_body(raw, &cps)) {
    cps.clear();
    // raw.encode(): `raw` is already the UTF-8 bytes.
    cps = unicode_escape_ignore(raw);
  }
  return json_dumps_body(cps);
}

}  // namespace foxeval::niah
