// Shared pieces of the Forgetting Attention CUDA kernels: parameters, pruning counts, exp2. The
// PTX wrappers they build on are the shared ones of kernels/hopper/, which the fa:: code calls by
// their bare names (the using-directive below).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/hopper/mma_sync.cuh"

namespace foxeval::fa {

using namespace foxeval::hopper;

struct FaParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;                     // [B, H, Tq, D], last dim contiguous (prefill: strides o_s*)
  const float* c;              // cum log forget gate [B, H, Tk] (nullptr: plain causal)
  const int64_t* seq_start;    // [B] or nullptr
  const float* threshold;      // [B, H] or nullptr (adaptive computation pruning)
  const int64_t* kv_len;       // [B] or nullptr: keys held per row (decode), else Tk
  // [4] or nullptr: adaptive-pruning counts (forgetting_attention.h AttentionArgs::pruning_counts)
  unsigned long long* prune_counts;
  int64_t q_sb, q_sh, q_st;    // strides in elements (last dim contiguous)
  int64_t k_sb, k_sh, k_st;
  int64_t v_sb, v_sh, v_st;
  int64_t c_sb, c_sh, c_st;
  int64_t o_sb, o_sh, o_st;    // prefill output strides (decode writes o contiguous)
  int64_t thr_sb, thr_sh;
  int B, H, Hkv, Tq, Tk;
  int window;                  // sliding window W: the query at p sees keys p-W+1..p (0: none)
  float scale_log2;            // softmax scale * log2(e)
  // split-K (decode) scratch
  float* o_part;               // [B, H, Tq, splits, D]
  float* ml_part;              // [B, H, Tq, splits, 2]  (m, l) in log2 domain
  int num_splits;
  int split_len;               // keys per split
};

constexpr float kLog2e = 1.4426950408889634f;

// Adds one CUDA block's share to the pruning counts (p.prune_counts, see FaParams): `skipped` and
// `in_range` go to entries base and base + 1 (base 0: prefill blocks, 2: decode keys). One thread
// per CUDA block calls it; integer atomics, so the totals are the same bits in any order.
__device__ __forceinline__ void count_pruning(unsigned long long* counts, int base, long long skipped, long long in_range) {
  atomicAdd(counts + base, (unsigned long long)(skipped > 0 ? skipped : 0));
  atomicAdd(counts + base + 1, (unsigned long long)(in_range > 0 ? in_range : 0));
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace foxeval::fa
