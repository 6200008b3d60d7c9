#include "data/python/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "data/errors.h"

namespace foxeval {

namespace {

// NumPy's pairwise_sum for doubles (8 accumulators over blocks of at most 128 elements,
// recursive halving above, rounded down to a multiple of 8).
double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = -0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

}  // namespace

double python_round2(double x) {
  if (!std::isfinite(x)) return x;
  // printf rounds the exact binary value to nearest, ties to even, as CPython's dtoa does;
  // strtod takes the decimal back to the nearest double, as round() does.
  char buf[512];
  const int len = std::snprintf(buf, sizeof buf, "%.2f", x);
  if (len < 0 || len >= static_cast<int>(sizeof buf)) throw Error("python_round2: cannot format " + std::to_string(x));
  return std::strtod(buf, nullptr);
}

double numpy_round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

double numpy_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size());
}

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX.
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  if (ec != std::errc()) throw Error("python_float_repr: to_chars failed");
  const std::string sci(buf, end);
  const size_t e_at = sci.find('e');
  std::string sign, digits;
  for (size_t i = 0; i < e_at; ++i) {
    if (sci[i] == '-') sign = "-";
    else if (sci[i] != '.') digits += sci[i];
  }
  const int exponent = std::atoi(sci.c_str() + e_at + 1);
  // float_repr_style 'short' (format code 'r'): fixed while -4 <= exponent < 16.
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else {
      const size_t int_digits = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_digits) out = digits + std::string(int_digits - digits.size(), '0') + ".0";
      else out = digits.substr(0, int_digits) + "." + digits.substr(int_digits);
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  const int magnitude = exponent < 0 ? -exponent : exponent;
  return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
}

std::string python_str(const nlohmann::json& v, const std::string& what) {
  switch (v.type()) {
    case nlohmann::json::value_t::string: return v.get<std::string>();
    case nlohmann::json::value_t::number_integer: return std::to_string(v.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return std::to_string(v.get<uint64_t>());
    case nlohmann::json::value_t::number_float: return python_float_repr(v.get<double>());
    case nlohmann::json::value_t::boolean: return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::null: return "None";
    default: throw Error(what + " must be a string, a number, a boolean or null, not " + std::string(v.type_name()));
  }
}

}  // namespace foxeval
