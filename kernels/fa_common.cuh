// Shared pieces of the Forgetting Attention CUDA kernels: parameters, PTX wrappers.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace foxeval::fa {

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

template <typename T> struct TypeTraits;
template <> struct TypeTraits<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack(float a, float b) {
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t x) {
    __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162*>(&x);
    return __bfloat1622float2(h);
  }
};
template <> struct TypeTraits<__half> {
  static __device__ __forceinline__ uint32_t pack(float a, float b) {
    __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t x) {
    __half2 h = *reinterpret_cast<__half2*>(&x);
    return __half22float2(h);
  }
};

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; src_bytes = 0 zero-fills the destination (out-of-range rows).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

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
