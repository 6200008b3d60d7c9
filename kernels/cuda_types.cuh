// Element types of the fused elementwise kernels (causal_conv.cu, mamba2_glue.cu, fused_glue.cu, ...): fp32 <->
// bf16/fp16 conversions on the device (round to nearest even), and the host-side dispatch over
// the three float dtypes; bf16 pairs in 32-bit registers; the (max, sum of exp) merge of the losses.
#pragma once
#include <c10/core/ScalarType.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace foxeval {
namespace cuda_types {

using bf16 = __nv_bfloat16;
using f16 = __half;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(f16 v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) { return v; }
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ f16 from_f<f16>(float v) { return __float2half_rn(v); }

// A type as a value, for generic lambdas: with_type(t, [&](auto tag) { using T = typename decltype(tag)::type; }).
template <typename T>
struct Tag {
  using type = T;
};

// 8 bf16 values packed in 16 bytes (one vector load) -> 8 floats.
__device__ __forceinline__ void unpack_bf16x8(const uint4& u, float* f) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h;
    *reinterpret_cast<uint32_t*>(&h) = w[i];
    const float2 t = __bfloat1622float2(h);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

// 8 elements from / to a 16-byte aligned pointer (fp32: two 16-byte accesses).
__device__ __forceinline__ void load8(const float* p, float* v) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
  v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}
__device__ __forceinline__ void load8(const bf16* p, float* v) {
  cuda_types::unpack_bf16x8(*reinterpret_cast<const uint4*>(p), v);
}
__device__ __forceinline__ void store8(float* p, const float* v) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void store8(bf16* p, const float* v) {
  uint4 u;
  uint32_t* w = reinterpret_cast<uint32_t*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
    w[i] = *reinterpret_cast<uint32_t*>(&h);
  }
  *reinterpret_cast<uint4*>(p) = u;
}

// A bf16 pair (a in the low half) from two floats, rounded to nearest even; and its halves back.
// Plain 32-bit registers (no address taken), so arrays of pairs stay in registers.
__device__ __forceinline__ uint32_t pack_bf16x2(float a, float b) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(b), "f"(a));
  return r;
}
__device__ __forceinline__ float bf16_lo(uint32_t x) { return __uint_as_float(x << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t x) { return __uint_as_float(x & 0xffff0000u); }

// Merges a (maximum, sum of exp(x - maximum)) pair (m, s) with (m2, s2) into m' = max(m, m2),
// s * exp(m - m') + s2 * exp(m2 - m'); a -inf maximum is the empty set. Commutative to the bit.
__device__ __forceinline__ void merge_max_sum(float& m, float& s, float m2, float s2) {
  if (m2 == -INFINITY) return;
  if (m == -INFINITY) {
    m = m2;
    s = s2;
    return;
  }
  const float mx = fmaxf(m, m2);
  s = s * __expf(m - mx) + s2 * __expf(m2 - mx);
  m = mx;
}

// Activations with torch's formulas (IEEE division, expf), so fused kernels give its bits.
__device__ __forceinline__ float sigmoid_torch(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ float silu_torch(float x) { return x / (1.f + expf(-x)); }

inline bool float_type(c10::ScalarType t) { return t == c10::kFloat || t == c10::kBFloat16 || t == c10::kHalf; }

// Calls f(Tag<float|bf16|f16>) for t (one of float_type()).
template <typename F>
void with_type(c10::ScalarType t, F&& f) {
  if (t == c10::kFloat)
    f(Tag<float>{});
  else if (t == c10::kBFloat16)
    f(Tag<bf16>{});
  else
    f(Tag<f16>{});
}

inline bool aligned(const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

}  // namespace cuda_types
}  // namespace foxeval
