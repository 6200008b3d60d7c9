#include "data/python/random.h"

#include <algorithm>
#include <cmath>

namespace foxeval {
namespace {
constexpr int kN = 624, kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU, kUpper = 0x80000000U, kLower = 0x7fffffffU;
}  // namespace

PyRandom::PyRandom(uint64_t seed) {
  // random_seed(): the absolute value's 32-bit words, least significant first; 0 is one word [0].
  std::vector<uint32_t> key;
  for (uint64_t s = seed; s != 0; s >>= 32) key.push_back(static_cast<uint32_t>(s & 0xffffffffU));
  if (key.empty()) key.push_back(0);
  // init_genrand(19650218), then init_by_array (MT19937 reference code, as _randommodule.c).
  mt_[0] = 19650218U;
  for (int i = 1; i < kN; ++i) mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  int i = 1;
  size_t j = 0;
  for (size_t k = std::max<size_t>(kN, key.size()); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] + static_cast<uint32_t>(j);
    ++i, ++j;
    if (i >= kN) mt_[0] = mt_[kN - 1], i = 1;
    if (j >= key.size()) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) mt_[0] = mt_[kN - 1], i = 1;
  }
  mt_[0] = 0x80000000U;
  index_ = kN;
}

uint32_t PyRandom::next() {
  if (index_ >= kN) {
    for (int kk = 0; kk < kN; ++kk) {
      const uint32_t y = (mt_[kk] & kUpper) | (mt_[(kk + 1) % kN] & kLower);
      mt_[kk] = mt_[(kk + kM) % kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= y >> 18;
  return y;
}

double PyRandom::random() {
  const uint32_t a = next() >> 5, b = next() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::vector<size_t> PyRandom::choice_indices(size_t n, size_t k) {
  std::vector<size_t> out(k);
  const double nf = static_cast<double>(n);  // Lib/random.py: n += 0.0
  for (size_t i = 0; i < k; ++i) out[i] = static_cast<size_t>(std::floor(random() * nf));
  return out;
}

}  // namespace foxeval
