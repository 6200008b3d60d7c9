#include "tasks/longbench/python_numbers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "data/errors.h"

namespace foxeval::longbench {

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

}  // namespace foxeval::longbench
