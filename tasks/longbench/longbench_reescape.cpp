#include "tasks/longbench/longbench_reescape.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "data/errors.h"
#include "data/json_escape.h"

namespace foxeval::longbench {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code point of a "\uXXXX" escape starting at s[i] (s[i] == '\\'), or -1.
int32_t u_escape_at(std::string_view s, size_t i) {
  if (i + 6 > s.size() || s[i + 1] != 'u') return -1;
  int32_t v = 0;
  for (size_t k = 2; k < 6; ++k) {
    const int h = hex_value(s[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

bool is_surrogate(int32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

std::string u_escape(int32_t cp) { return fmt::format("\\u{:04x}", cp); }

// Code points of a valid UTF-8 string (json_unescape's output).
std::set<int32_t> code_points(std::string_view utf8) {
  std::set<int32_t> out;
  for (size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    int32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n && i + k < utf8.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    out.insert(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace

std::string reescape_decoded(std::string_view raw) {
  // Every surrogate escape (at an escape start: backslash runs pair up, as both decoders read them)
  // is swapped for a private-use code point the text does not otherwise hold; the shared decoder
  // then keeps it as an ordinary character, and the swap is undone on the re-escaped text.
  std::vector<size_t> at;
  std::set<int32_t> surrogates;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') continue;
    const int32_t cp = u_escape_at(raw, i);
    if (is_surrogate(cp)) {
      at.push_back(i);
      surrogates.insert(cp);
      i += 5;
    } else {
      ++i;  // the escaped character (a second backslash is not an escape start)
    }
  }
  if (at.empty()) return json_escape(json_unescape(raw));

  const std::set<int32_t> used = code_points(json_unescape(raw));
  std::map<int32_t, int32_t> to_placeholder, to_surrogate;
  int32_t next = 0xE000;
  for (int32_t s : surrogates) {
    while (next <= 0xF8FF && used.count(next)) ++next;
    if (next > 0xF8FF) throw Error("LongBench truncation: no free private-use code point to carry a lone surrogate");
    to_placeholder[s] = next;
    to_surrogate[next] = s;
    ++next;
  }
  std::string protected_raw(raw);
  for (size_t i : at) protected_raw.replace(i, 6, u_escape(to_placeholder.at(u_escape_at(raw, i))));

  const std::string escaped = json_escape(json_unescape(protected_raw));
  // json_escape's output: every backslash starts an escape, "\uXXXX" or two characters.
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size();) {
    if (escaped[i] != '\\') {
      out += escaped[i++];
      continue;
    }
    const int32_t cp = u_escape_at(escaped, i);
    if (cp >= 0) {
      auto it = to_surrogate.find(cp);
      out += it != to_surrogate.end() ? u_escape(it->second) : std::string(escaped.substr(i, 6));
      i += 6;
    } else {
      out.append(escaped, i, 2);
      i += 2;
    }
  }
  return out;
}

}  // namespace foxeval::longbench
