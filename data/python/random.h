// Python's random.Random (CPython 3.11, Modules/_randommodule.c and Lib/random.py), bit-exact for
// the calls foxeval ports: seed(int), random(), choices(xs, k) without weights. lm-eval 0.4.4's
// bootstrap stderr draws from it (api/metrics.py: _bootstrap_internal seeds Random(i) per chunk),
// and `foxeval compare` resamples with it so a Python script can reproduce any interval.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace foxeval {

class PyRandom {
 public:
  // random.Random(seed) for a non-negative integer seed: init_by_array over its 32-bit words.
  explicit PyRandom(uint64_t seed);
  // random.random(): 53 random bits in [0, 1) (genrand_res53).
  double random();
  // The indices random.choices(population, k=k) picks from a population of n (no weights):
  // floor(random() * n) each, in order.
  std::vector<size_t> choice_indices(size_t n, size_t k);

 private:
  uint32_t next();
  uint32_t mt_[624];
  int index_ = 624;
};

}  // namespace foxeval
