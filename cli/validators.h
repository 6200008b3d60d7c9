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

#include "data/flag_values.h"  // detail::parse_int64/parse_double/shown, kMaxNewTokens, kMaxContextTokens

namespace foxeval {


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


}  // namespace foxeval
