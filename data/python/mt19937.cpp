#include "data/python/mt19937.h"

#include <algorithm>

namespace foxeval {

void Mt19937::init_genrand(uint32_t s) {
  mt[0] = s;
  for (int i = 1; i < N; ++i) mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<uint32_t>(i);
  index = N;
}

void Mt19937::init_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218u);
  const size_t key_length = key.size();
  size_t i = 1, j = 0;
  for (size_t k = std::max<size_t>(N, key_length); k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
    ++i, ++j;
    if (i >= N) mt[0] = mt[N - 1], i = 1;
    if (j >= key_length) j = 0;
  }
  for (size_t k = N - 1; k; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= N) mt[0] = mt[N - 1], i = 1;
  }
  mt[0] = 0x80000000u;  // non-zero initial array
}

uint32_t Mt19937::next_uint32() {
  constexpr int M = 397;
  constexpr uint32_t kMatrixA = 0x9908b0dfu, kUpper = 0x80000000u, kLower = 0x7fffffffu;
  if (index >= N) {
    int kk = 0;
    for (; kk < N - M; ++kk) {
      uint32_t y = (mt[kk] & kUpper) | (mt[kk + 1] & kLower);
      mt[kk] = mt[kk + M] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    }
    for (; kk < N - 1; ++kk) {
      uint32_t y = (mt[kk] & kUpper) | (mt[kk + 1] & kLower);
      mt[kk] = mt[kk + (M - N)] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    }
    uint32_t y = (mt[N - 1] & kUpper) | (mt[0] & kLower);
    mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
    index = 0;
  }
  uint32_t y = mt[index++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

}  // namespace foxeval
