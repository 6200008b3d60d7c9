// Caches of sliding-window attention (Transformer (SWA), Samba's attention layers), whose query at
// position p sees keys p-W+1..p only (kernels/forgetting_attention.h, AttentionArgs::window):
// - a decoding state's contiguous cache keeps the W - 1 keys before the next query and forgets the
//   older ones in batches (SequenceCache::drop_front), so it holds about 2W keys at most;
// - a decoding slot keeps a ring of W positions, the token at position p at p % W; a decode step
//   writes there and attends to every entry the ring holds (min(p + 1, W) of them: exactly its
//   window), with kv_len and no window in AttentionArgs. Key order does not matter to softmax
//   attention (RoPE is applied before the keys are stored).
#pragma once
#include <ATen/Functions.h>

#include <algorithm>
#include <cstdint>

namespace foxeval {

// Keys a contiguous cache holds before it forgets all but the last W - 1 (at least 1: a forget
// gate's c continues from the last key): a copy of ~W keys every ~W tokens, O(1) a token.
inline int64_t window_keep_limit(int64_t window) { return 2 * (window - 1) + 64; }

// Positions a slot of `capacity` tokens keeps per layer: all of them, or a window's W (0: none).
inline int64_t window_ring_size(int64_t capacity, int64_t window) {
  return window > 0 ? std::min(capacity, window) : capacity;
}

// The entries a ring of R positions holds after a sequence of n tokens, from `held` (the last
// held.size(dim) >= min(n, R) entries of its contiguous cache, along `dim`): the last m = min(n, R)
// tokens, entry i = the token at the position p with p % R == i; the caller writes them to entries
// [0, m) of the ring. A new tensor when the ring wrapped (n > R), else a view of `held`.
inline at::Tensor ring_from_tail(const at::Tensor& held, int64_t n, int64_t R, int64_t dim) {
  const int64_t m = std::min(n, R);
  at::Tensor tail = held.narrow(dim, held.size(dim) - m, m);
  return n > m ? at::roll(tail, (n - m) % R, dim) : tail;  // token n - m + t goes to (n - m + t) % R
}

}  // namespace foxeval
