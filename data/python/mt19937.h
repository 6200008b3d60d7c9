// The Mersenne Twister MT19937 (Matsumoto & Nishimura's mt19937ar.c), the generator under both
// CPython's `random` and NumPy's legacy `RandomState`; they differ only in how they seed it.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace foxeval {

struct Mt19937 {
  static constexpr int N = 624;
  std::array<uint32_t, N> mt{};
  int index = N;

  void init_genrand(uint32_t s);                    // NumPy's RandomState.seed(int)
  void init_by_array(const std::vector<uint32_t>& key);  // CPython's random.seed(int)
  uint32_t next_uint32();                           // genrand_uint32 (genrand_int32)
};

}  // namespace foxeval
