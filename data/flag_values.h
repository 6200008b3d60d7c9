// Flag values read the same way in every layer that takes them from the command line (cli/, and
// bench/ for its list flags): bounds shared by many flags, whole-string number parsing, a typed
// value as it may be quoted in a message, and integer lists.
#pragma once
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "data/errors.h"

namespace foxeval {

// The largest number of new tokens any generation flag takes (2^20): beyond any context the
// checkpoints were trained or evaluated at, small enough that its buffers are never the problem.
constexpr int64_t kMaxNewTokens = int64_t(1) << 20;
// The largest context length in tokens a flag may ask for (2^20, 1M tokens: 32x the paper's longest NIAH
// context and 16x LongCrawl64's rows).
constexpr int64_t kMaxContextTokens = int64_t(1) << 20;

namespace detail {

inline std::string int_bounds_text(int64_t lo, int64_t hi) {
  if (hi == std::numeric_limits<int64_t>::max()) return fmt::format("an integer >= {}", lo);
  return fmt::format("an integer in [{}, {}]", lo, hi);
}

// Parses all of `s` as a base-10 integer; false when it is not one or overflows int64.
inline bool parse_int64(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || end == s.c_str() || *end != '\0') return false;
  out = static_cast<int64_t>(v);
  return true;
}

inline bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return false;
  out = v;
  return true;
}

// The value as typed, cut and with control characters shown as '?', for messages.
inline std::string shown(const std::string& s) {
  std::string out = s.substr(0, 40);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s.size() > 40 ? out + "..." : out;
}

}  // namespace detail

// A flag's list of integers: "1,2,3", "1 2 3" or "[1, 2, 3]". Errors name the flag and the place;
// an empty item ("1,,2", a leading or trailing comma) is refused, not skipped.
inline std::vector<int64_t> parse_int_list(const std::string& s, const std::string& flag) {
  std::vector<int64_t> v;
  std::size_t i = 0;
  bool item_due = false;  // a comma was the last separator: an integer must come next
  while (i < s.size()) {
    const char c = s[i];
    if (c == ',') {
      if (v.empty() || item_due)
        throw Error(fmt::format("{}: empty list item before the comma at character {} of '{}'", flag, i, s.substr(0, 40)));
      item_due = true;
      ++i;
      continue;
    }
    if (c == '[' || c == ']' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::size_t used = 0;
    try {
      v.push_back(std::stoll(s.substr(i), &used));
    } catch (const std::exception&) {
      throw Error(fmt::format("{}: not an integer at character {}: '{}'", flag, i, s.substr(i, 12)));
    }
    item_due = false;
    i += used;
  }
  if (item_due) throw Error(fmt::format("{}: empty list item after the last comma of '{}'", flag, s.substr(0, 40)));
  return v;
}

}  // namespace foxeval
