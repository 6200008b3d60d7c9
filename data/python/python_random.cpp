#include "data/python/python_random.h"

#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "data/errors.h"

namespace foxeval {

namespace {

int bit_length(uint64_t n) {
  int k = 0;
  while (n) ++k, n >>= 1;
  return k;
}

}  // namespace

void PythonRandom::seed(uint64_t seed) {
  // random_seed(): abs(n) as 32-bit words, least significant first; 0 is the one word [0].
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed);
  mt_.init_by_array(key);
}

uint64_t PythonRandom::getrandbits(int k) {
  if (k < 0 || k > 64) throw Error("PythonRandom::getrandbits: k must be in 0..64, got " + std::to_string(k));
  if (k == 0) return 0;
  std::vector<uint32_t> w = getrandbits_words(k);
  return w.size() == 1 ? w[0] : (static_cast<uint64_t>(w[1]) << 32) | w[0];
}

std::vector<uint32_t> PythonRandom::getrandbits_words(int k) {
  std::vector<uint32_t> words;
  if (k <= 0) return words;
  if (k <= 32) return {next_uint32() >> (32 - k)};
  // Least significant word first; the last (partial) word drops its low bits.
  for (; k > 0; k -= 32) {
    uint32_t r = next_uint32();
    if (k < 32) r >>= (32 - k);
    words.push_back(r);
  }
  return words;
}

uint64_t PythonRandom::randbelow(uint64_t n) {
  if (n == 0) throw Error("PythonRandom::randbelow: n must be positive");
  const int k = bit_length(n);  // n.bit_length(), not (n-1)'s: n can be 1
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

int64_t PythonRandom::randrange(int64_t start, int64_t stop) {
  if (stop <= start)
    throw Error("PythonRandom::randrange: empty range (" + std::to_string(start) + ", " + std::to_string(stop) + ")");
  return start + static_cast<int64_t>(randbelow(static_cast<uint64_t>(stop - start)));
}

double PythonRandom::random() {
  const uint32_t a = next_uint32() >> 5, b = next_uint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

size_t PythonRandom::choices_index(size_t n) {
  return static_cast<size_t>(std::floor(random() * static_cast<double>(n)));
}

std::vector<size_t> PythonRandom::sample_indices(size_t n, size_t k) {
  if (k > n) throw Error("PythonRandom::sample: sample larger than population (" + std::to_string(k) + " > " + std::to_string(n) + ")");
  std::vector<size_t> result(k);
  // CPython compares n with the size of the table a k-element set would need.
  size_t setsize = 21;
  if (k > 5) setsize += static_cast<size_t>(std::pow(4.0, std::ceil(std::log(static_cast<double>(k * 3)) / std::log(4.0))));
  if (n <= setsize) {
    std::vector<size_t> pool(n);
    for (size_t i = 0; i < n; ++i) pool[i] = i;
    for (size_t i = 0; i < k; ++i) {
      const size_t j = static_cast<size_t>(randbelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    std::unordered_set<size_t> selected;
    for (size_t i = 0; i < k; ++i) {
      size_t j = static_cast<size_t>(randbelow(n));
      while (selected.count(j)) j = static_cast<size_t>(randbelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

std::string python_choices_string(PythonRandom& rng, const std::string& alphabet, size_t k) {
  std::string out;
  out.reserve(k);
  for (size_t i = 0; i < k; ++i) out.push_back(alphabet[rng.choices_index(alphabet.size())]);
  return out;
}

std::string python_uuid4_string(const std::vector<uint32_t>& words) {
  if (words.size() != 4) throw Error("python_uuid4_string: expected four 32-bit words");
  uint32_t w[4] = {words[0], words[1], words[2], words[3]};
  // UUID(int=..., version=4): variant bits 62..63 := 10, version bits 76..79 := 0100.
  w[1] = (w[1] & ~0xc0000000u) | 0x80000000u;
  w[2] = (w[2] & ~0x0000f000u) | 0x00004000u;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%04x%08x", w[3], w[2] >> 16, w[2] & 0xffffu, w[1] >> 16,
                w[1] & 0xffffu, w[0]);
  return buf;
}

}  // namespace foxeval
