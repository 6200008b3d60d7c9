// Forgetting Attention (FoX, ICLR 2025), the one entry point every family calls.
//
//   o_i = sum_{j <= i} softmax_j(scale * q_i . k_j + c_i - c_j) v_j,   c_t = sum_{l<=t} log f_l
//
// Shapes (head first; any strides with a contiguous last dim):
//   q [B, H, Tq, D], k and v [B, Hkv, Tk, D] with Tq <= Tk and H % Hkv == 0 (grouped KV heads).
//   Query i sits at key position Tk - Tq + i (chunked prefill / decoding against a cache).
//   cum_log_fgate [B, H, Tk] float32 = c for every key position; undefined = plain causal
//   attention (Transformer). The decay bias is added in fp32: c reaches -1e4 at 64k tokens.
//   seq_start [B] int64 (optional): keys before it are left padding and get no weight.
//   adaptive_threshold [B, H] float32 (optional): key blocks whose decay bias c_i - c_j is
//   below it for every pair may be skipped (adaptive computation pruning, off by default).
//   window W (0 = none): sliding-window attention, flash-attn's rule (window_size = (W - 1, 0)):
//   the query at key position p sees keys p-W+1..p only (and, as always, none before seq_start).
//   Key positions are indices into k: a cache trimmed at the front keeps the rule as long as it
//   still holds the W - 1 keys before the first query.
//   kv_len [B] int64 (optional, decode only: Tq <= 8): row b holds kv_len[b] keys, the rest of
//   k/v/cum_log_fgate is ignored and its queries sit at kv_len[b] - Tq + i. Lengths read on the
//   device, so fixed-capacity caches keep fixed shapes (decoding slots, CUDA graphs).
//   pruning_counts [4] int64 CUDA (optional): the CUDA kernels add what adaptive pruning did, with
//   device atomics (no synchronization, CUDA-graph safe; undefined = not counted, no cost):
//     [0] prefill key blocks that pruning skipped, of
//     [1] prefill key blocks in range: per query block (one CUDA block), the key blocks from the one
//         holding seq_start to the causal end (block sizes are the kernel's: the fraction is what
//         compares across kernels);
//     [2] decode keys that pruning skipped, of
//     [3] decode keys in range: per query row, the keys from seq_start to the query's own position.
//   Counted whether or not adaptive_threshold is set (then nothing is skipped). The torch path
//   never skips and leaves the counts untouched.
// Returns o [B, H, Tq, D] in q's dtype (any strides: the CUDA prefill returns a view of a
// [B, Tq, H, D] buffer).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

struct AttentionArgs {
  at::Tensor q, k, v;
  at::Tensor cum_log_fgate;       // optional
  at::Tensor seq_start;           // optional
  at::Tensor adaptive_threshold;  // optional
  at::Tensor kv_len;              // optional
  at::Tensor pruning_counts;      // optional, int64 [4] on the CUDA device (see above)
  double scale = 0.0;             // 0 = 1/sqrt(D)
  int64_t window = 0;             // sliding window W >= 1 (keys p-W+1..p); 0 = full causal
};

// Dispatches: the CUDA kernel for bf16/fp16 CUDA tensors with a supported head dim,
// the exact torch-ops path otherwise.
at::Tensor forgetting_attention(const AttentionArgs& args);

// Sliding-window softmax attention (Transformer (SWA), Samba's attention layers): no forget gate,
// grouped KV heads allowed (H % Hkv == 0), q [B, H, Tq, D], k and v [B, Hkv, Tk, D], the query i
// at key position Tk - Tq + i sees keys from max(0, that - window + 1) up to itself. window >= 1.
// The same kernels as forgetting_attention (CUDA for bf16/fp16 with head dim 64/128, the exact
// torch path otherwise). Decoding against a ring buffer of W slots (models/generation/window_cache.h) is
// plain attention over the slots held: pass kv_len with window 0, not this.
at::Tensor sliding_window_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window,
                                    double scale = 0.0);

// Exact on any device and dtype: tiled over queries (memory O(tile * Tk), never Tk x Tk),
// scores and softmax in fp32. The reference the CUDA kernels are tested against.
at::Tensor forgetting_attention_torch(const AttentionArgs& args);

// True when forgetting_attention_cuda supports these arguments.
bool forgetting_attention_cuda_supports(const AttentionArgs& args);
// The CUDA kernels (kernels/forgetting_attention.cu): prefill when Tq is large, split-K
// (flash-decoding) when Tq is small and Tk long.
at::Tensor forgetting_attention_cuda(const AttentionArgs& args);
// Which prefill kernel forgetting_attention_cuda uses on the current device: "ws" (Hopper,
// warp-specialized TMA) or "mma" (FOXEVAL_FA_IMPL forces one).
const char* forgetting_attention_prefill_impl();

}  // namespace foxeval
