// NumPy's legacy global generator (np.random.seed / np.random.randint, i.e. RandomState on
// MT19937), bit for bit for the calls RULER's variable-tracking task makes, and NumPy's
// linspace/round and SciPy's zeta(2) as lm-eval's RULER code evaluates them.
// Tested against NumPy over generated inputs (tests/tools/python_random_goldens.py).
#pragma once
#include <cstdint>
#include <vector>

#include "data/python/mt19937.h"

namespace foxeval {

class NumpyRandomState {
 public:
  // RandomState(seed) / np.random.seed(seed) for an int 0 <= seed < 2**32 (legacy seeding:
  // init_genrand, not init_by_array as CPython does).
  explicit NumpyRandomState(uint32_t seed = 0) { this->seed(seed); }
  void seed(uint32_t seed) { mt_.init_genrand(seed); }

  // np.random.randint(low, high) with the default int64 dtype: masked rejection sampling of
  // high - 1 - low, as the legacy generator keeps doing. Ranges wider than 2**32 are refused
  // (they draw 64-bit words; nothing here needs them).
  int64_t randint(int64_t low, int64_t high);

 private:
  Mt19937 mt_;
};

// np.round(np.linspace(start, stop, num)).astype(int): i * ((stop - start) / (num - 1)) + start,
// the last point set to stop, rounded half to even.
std::vector<int64_t> numpy_round_linspace(double start, double stop, int num);

}  // namespace foxeval
