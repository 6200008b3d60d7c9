#include "data/python/numpy_random.h"

#include <cmath>
#include <string>

#include "data/errors.h"

namespace foxeval {

int64_t NumpyRandomState::randint(int64_t low, int64_t high) {
  if (high <= low)
    throw Error("NumpyRandomState::randint: low >= high (" + std::to_string(low) + ", " + std::to_string(high) + ")");
  const uint64_t rng = static_cast<uint64_t>(high - 1 - low);
  if (rng > 0xffffffffull) throw Error("NumpyRandomState::randint: ranges wider than 2**32 are not supported");
  if (rng == 0) return low;  // no draw
  if (rng == 0xffffffffull) return low + static_cast<int64_t>(mt_.next_uint32());
  // gen_mask: the smallest all-ones mask covering rng.
  uint32_t mask = static_cast<uint32_t>(rng);
  mask |= mask >> 1, mask |= mask >> 2, mask |= mask >> 4, mask |= mask >> 8, mask |= mask >> 16;
  uint32_t v;
  while ((v = mt_.next_uint32() & mask) > rng) {
  }
  return low + static_cast<int64_t>(v);
}

std::vector<int64_t> numpy_round_linspace(double start, double stop, int num) {
  std::vector<int64_t> out;
  if (num <= 0) return out;
  const double step = num > 1 ? (stop - start) / (num - 1) : 0.0;
  for (int i = 0; i < num; ++i) {
    double y = (num > 1 && i == num - 1) ? stop : static_cast<double>(i) * step + start;
    out.push_back(static_cast<int64_t>(std::nearbyint(y)));  // rint: ties to even in the default mode
  }
  return out;
}

}  // namespace foxeval
