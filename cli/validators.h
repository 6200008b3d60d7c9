// Range checks for command-line numbers whose refusals read well: "--batch-size: 0: must be an
// integer >= 1" (CLI11's own Range/PositiveNumber print bounds such as 1.797...e+308 in 300 digits
// and let NaN through). Every integer flag with a range and every float flag uses these; main.cpp
// also adds `finite_number()` to every FLOAT option, so no command takes NaN or infinity.
#pragma once
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace foxeval {

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

// An integer in [lo, hi] (hi defaults to no upper bound).
inline CLI::Validator int_range(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) {
  const std::string want = detail::int_bounds_text(lo, hi);
  return CLI::Validator(
      [lo, hi, want](std::string& input) -> std::string {
        int64_t v = 0;
        if (!detail::parse_int64(input, v) || v < lo || v > hi)
          return fmt::format("'{}' is not allowed: must be {}", detail::shown(input), want);
        return {};
      },
      hi == std::numeric_limits<int64_t>::max() ? fmt::format(">= {}", lo) : fmt::format("in [{}, {}]", lo, hi));
}

// A finite number in [lo, hi]; `lo_open`: lo itself is excluded (e.g. "> 0").
inline CLI::Validator number_range(double lo, double hi, bool lo_open = false) {
  const bool no_hi = hi == std::numeric_limits<double>::max();
  const std::string want = no_hi ? fmt::format("a finite number {} {}", lo_open ? ">" : ">=", lo)
                                 : fmt::format("a number in {}{}, {}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [lo, hi, lo_open, want](std::string& input) -> std::string {
        double v = 0;
        if (!detail::parse_double(input, v) || !std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo))
          return fmt::format("'{}' is not allowed: must be {}", detail::shown(input), want);
        return {};
      },
      no_hi ? fmt::format("{} {}", lo_open ? ">" : ">=", lo) : fmt::format("in {}{}, {}]", lo_open ? "(" : "[", lo, hi));
}

// Any unsigned 64-bit integer (seeds): no sign, no overflow (CLI11 alone wraps "-1" and clamps "1e30").
inline CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        errno = 0;
        char* end = nullptr;
        const bool digits = !input.empty() && std::isdigit(static_cast<unsigned char>(input[0]));
        (void)std::strtoull(input.c_str(), &end, 10);
        if (!digits || errno == ERANGE || *end != '\0')
          return fmt::format("'{}' is not allowed: must be an integer in [0, 18446744073709551615]", detail::shown(input));
        return {};
      },
      "in [0, 2^64)");
}

inline CLI::Validator positive_number() { return number_range(0.0, std::numeric_limits<double>::max(), true); }
inline CLI::Validator non_negative_number() { return number_range(0.0, std::numeric_limits<double>::max()); }

// Any finite number (main.cpp puts it on every FLOAT option).
inline CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double v = 0;
        if (!detail::parse_double(input, v) || !std::isfinite(v))
          return fmt::format("'{}' is not allowed: must be a finite number", detail::shown(input));
        return {};
      },
      "");
}

// The largest number of new tokens any generation flag takes (2^20): beyond any context the
// checkpoints were trained or evaluated at, small enough that its buffers are never the problem.
constexpr int64_t kMaxNewTokens = int64_t(1) << 20;
// The largest context length in tokens a flag may ask for (2^20, 1M tokens: 32x the paper's longest NIAH
// context and 16x LongCrawl64's rows).
constexpr int64_t kMaxContextTokens = int64_t(1) << 20;

}  // namespace foxeval
