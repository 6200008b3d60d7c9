// CPython 3.11's `random.Random`, bit for bit: the Mersenne Twister seeded from an int through
// init_by_array (random.seed(n), random.Random(n)), and the methods RULER's generators
// (lm-eval's tasks/ruler) draw with. Each method consumes the 32-bit outputs exactly as CPython's
// does, so a sequence of calls gives Python's values and leaves the stream where Python's is.
// Tested against CPython over generated call sequences (tests/tools/python_random_goldens.py).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/python/mt19937.h"

namespace foxeval {

class PythonRandom {
 public:
  // random.Random(seed) for a non-negative int seed.
  explicit PythonRandom(uint64_t seed = 0) { this->seed(seed); }
  // random.seed(seed): the int's 32-bit words, least significant first, fed to init_by_array.
  void seed(uint64_t seed);

  uint32_t next_uint32() { return mt_.next_uint32(); }
  uint64_t getrandbits(int k);               // 0 <= k <= 64
  std::vector<uint32_t> getrandbits_words(int k);  // any k >= 0: the int's 32-bit words, least significant first
  uint64_t randbelow(uint64_t n);            // _randbelow_with_getrandbits, n > 0
  int64_t randrange(int64_t start, int64_t stop);  // step 1, start < stop
  int64_t randint(int64_t a, int64_t b) { return randrange(a, b + 1); }
  double random();                           // 53-bit float in [0, 1)

  // The indices random.sample(range(n), k) returns (the set or the pool algorithm, as CPython
  // picks by the table size of a k-element set); random.sample(population, k) is population at them.
  std::vector<size_t> sample_indices(size_t n, size_t k);
  // random.shuffle(x)'s swaps applied to x.
  template <class T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) std::swap(x[i], x[static_cast<size_t>(randbelow(i + 1))]);
  }
  template <class T>
  const T& choice(const std::vector<T>& seq) {
    return seq.at(static_cast<size_t>(randbelow(seq.size())));
  }
  // random.choices(population, k=k) without weights: floor(random() * n) per pick.
  size_t choices_index(size_t n);
  template <class T>
  std::vector<T> sample(const std::vector<T>& population, size_t k) {
    std::vector<T> out;
    out.reserve(k);
    for (size_t i : sample_indices(population.size(), k)) out.push_back(population[i]);
    return out;
  }

  const Mt19937& state() const { return mt_; }

 private:
  Mt19937 mt_;
};

// "".join(random.choices(alphabet, k=k)) for an ASCII alphabet (string.ascii_uppercase, ...).
std::string python_choices_string(PythonRandom& rng, const std::string& alphabet, size_t k);

// str(uuid.UUID(int=value, version=4)) for a 128-bit value given as four 32-bit words, least
// significant first (as getrandbits_words(128) returns): version and variant bits forced.
std::string python_uuid4_string(const std::vector<uint32_t>& words);

}  // namespace foxeval
