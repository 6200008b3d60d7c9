// Mamba-2's gated output norm (see kernels/mamba2_glue.h).
//
// One block per row (b, t) of E = H*P elements. A thread owns up to kGateMaxItems chunks of V
// consecutive elements (V = 4: 16-byte fp32 loads of y and xs, 8-byte loads of 16-bit z; V = 1
// where P, the group size, the strides or the pointers do not allow it), chunk c at element
// c*V, never straddling a head or a group. Pass 1 forms g = (y + xs*D) * silu(z) in registers
// and writes each chunk's sum of squares to shared memory; pass 2 gives each group to one warp
// (a strided sum over the group's chunks, then a shuffle tree) and stores rsqrt(mean + eps);
// pass 3 scales the registers and stores. Deterministic: the sum order depends only on the
// shape and the launch configuration, never on timing.
#include "kernels/mamba2_glue.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "data/errors.h"
#include "kernels/cuda_types.cuh"

namespace foxeval {
namespace {

using namespace cuda_types;  // bf16, f16, to_f, from_f, Tag, with_type, aligned

constexpr int kGateMaxItems = 8;    // chunks per thread
constexpr int kGateMaxThreads = 1024;
constexpr int kWantItems = 4;   // chunks per thread aimed at (ILP; E = 3072 -> 192 threads)

// V elements (V = 4: fp32 one 16-byte access, 16-bit types one 8-byte access; V = 1: scalar).
template <int V>
__device__ __forceinline__ void gate_load_vec(const float* p, float* v) {
  if constexpr (V == 4) {
    const float4 a = *reinterpret_cast<const float4*>(p);
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
  } else {
    v[0] = *p;
  }
}
template <int V, typename T>
__device__ __forceinline__ void gate_load_vec(const T* p, float* v) {
  if constexpr (V == 4) {
    const uint2 u = *reinterpret_cast<const uint2*>(p);
    const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = to_f(h[e]);
  } else {
    v[0] = to_f(*p);
  }
}
template <int V>
__device__ __forceinline__ void gate_store_vec(float* p, const float* v) {
  if constexpr (V == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}
template <int V, typename T>
__device__ __forceinline__ void gate_store_vec(T* p, const float* v) {
  if constexpr (V == 4) {
    uint2 u;
    T* h = reinterpret_cast<T*>(&u);
#pragma unroll
    for (int e = 0; e < 4; ++e) h[e] = from_f<T>(v[e]);
    *reinterpret_cast<uint2*>(p) = u;
  } else {
    *p = from_f<T>(v[0]);
  }
}

struct NormParams {
  const void* y;             // fp32, or bf16 (the SSD kernel's y, D skip included)
  int64_t y_sb, y_sh, y_st;  // element strides of y [B, H, T, P]
  const float* xs;           // null: y includes the D skip
  int64_t x_sb, x_st;        // of xs [B, T, E]
  const float* D;            // [H]
  const void* z;
  int64_t z_sb, z_st;        // of z [B, T, E]
  const float* w;            // [E]
  void* out;                 // [B, T, E] contiguous
  int T, P, E, nchunks, chunks_per_group;
  float inv_n, eps;
};

template <typename Ty, typename Tz, typename Tout, int V>
__global__ void __launch_bounds__(kGateMaxThreads) gated_norm_kernel(const NormParams p) {
  extern __shared__ float sm[];  // [nchunks] chunk sums of squares, then [groups] rstd
  float* part = sm;
  float* rstd = sm + p.nchunks;
  const int row = blockIdx.x, b = row / p.T, t = row - b * p.T;
  const Ty* yr = static_cast<const Ty*>(p.y) + b * p.y_sb + t * p.y_st;
  const float* xr = p.xs ? p.xs + b * p.x_sb + t * p.x_st : nullptr;
  const Tz* zr = static_cast<const Tz*>(p.z) + b * p.z_sb + t * p.z_st;

  float g[kGateMaxItems][V];
#pragma unroll
  for (int k = 0; k < kGateMaxItems; ++k) {
    const int c = threadIdx.x + k * blockDim.x;
    if (c < p.nchunks) {
      const int e0 = c * V, h = e0 / p.P, q = e0 - h * p.P;
      float yv[V], xv[V], zv[V];
      gate_load_vec<V>(yr + h * p.y_sh + q, yv);
      if (xr) gate_load_vec<V>(xr + e0, xv);
      gate_load_vec<V>(zr + e0, zv);
      const float d = xr ? p.D[h] : 0.f;
      float ss = 0.f;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float u = xr ? __fadd_rn(yv[e], __fmul_rn(xv[e], d)) : yv[e];   // y + xs * D
        const float s = __fdiv_rn(zv[e], __fadd_rn(1.f, expf(-zv[e])));        // silu(z), as ATen
        g[k][e] = __fmul_rn(u, s);
        ss = __fadd_rn(ss, __fmul_rn(g[k][e], g[k][e]));
      }
      part[c] = ss;
    }
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const int groups = p.nchunks / p.chunks_per_group;
  for (int grp = warp; grp < groups; grp += nwarps) {
    const float* gp = part + grp * p.chunks_per_group;
    float s = 0.f;
    for (int i = lane; i < p.chunks_per_group; i += 32) s += gp[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    // ATen: mean = sum * (1/n), then + eps, then rsqrt.
    if (lane == 0) rstd[grp] = rsqrtf(__fadd_rn(__fmul_rn(s, p.inv_n), p.eps));
  }
  __syncthreads();
  Tout* orow = static_cast<Tout*>(p.out) + static_cast<int64_t>(row) * p.E;
#pragma unroll
  for (int k = 0; k < kGateMaxItems; ++k) {
    const int c = threadIdx.x + k * blockDim.x;
    if (c < p.nchunks) {
      const int e0 = c * V;
      const float r = rstd[c / p.chunks_per_group];
      float wv[V], o[V];
      gate_load_vec<V>(p.w + e0, wv);
#pragma unroll
      for (int e = 0; e < V; ++e) o[e] = __fmul_rn(__fmul_rn(g[k][e], r), wv[e]);  // (g * rstd) * weight
      gate_store_vec<V>(orow + e0, o);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.


// Chunk width for these arguments: 4 where every access of 4 elements is aligned and stays in
// one head and one group, else 1.
int chunk_width(const at::Tensor& y, const at::Tensor& xs, const at::Tensor& z, const at::Tensor& weight,
                int64_t group) {
  const int64_t P = y.size(3);
  const bool x_ok = !xs.defined() || (xs.stride(0) % 4 == 0 && xs.stride(1) % 4 == 0 && aligned(xs.data_ptr(), 16));
  const bool ok = P % 4 == 0 && group % 4 == 0 && y.stride(0) % 4 == 0 && y.stride(1) % 4 == 0 &&
                  y.stride(2) % 4 == 0 && aligned(y.data_ptr(), 4 * y.element_size()) && x_ok && z.stride(0) % 4 == 0 &&
                  z.stride(1) % 4 == 0 && aligned(z.data_ptr(), 4 * z.element_size()) &&
                  aligned(weight.data_ptr(), 16);
  return ok ? 4 : 1;
}

}  // namespace

bool mamba2_gated_norm_supports(const at::Tensor& y, const at::Tensor& xs, const at::Tensor& D, const at::Tensor& z,
                                const at::Tensor& weight, int64_t n_groups, at::ScalarType out_dtype) {
  if (!y.defined() || !D.defined() || !z.defined() || !weight.defined()) return false;
  if (!y.is_cuda() || y.dim() != 4 || y.stride(3) != 1) return false;
  // fp32 y with the D skip to add (xs), or the SSD kernel's bf16 y with it included (no xs).
  if (xs.defined() ? y.scalar_type() != at::kFloat : y.scalar_type() != at::kBFloat16) return false;
  const auto dev = y.device();
  const int64_t B = y.size(0), H = y.size(1), T = y.size(2), P = y.size(3), E = H * P;
  if (B < 1 || H < 1 || T < 1 || P < 1 || B * T > INT32_MAX || E > INT32_MAX) return false;
  if (xs.defined() && (xs.device() != dev || xs.scalar_type() != at::kFloat || xs.dim() != 4 || xs.size(0) != B ||
                      xs.size(1) != T || xs.size(2) != H || xs.size(3) != P || xs.stride(3) != 1 || xs.stride(2) != P))
    return false;
  if (D.device() != dev || D.scalar_type() != at::kFloat || D.dim() != 1 || D.size(0) != H || !D.is_contiguous())
    return false;
  if (z.device() != dev || !float_type(z.scalar_type()) || z.dim() != 3 || z.size(0) != B || z.size(1) != T ||
      z.size(2) != E || z.stride(2) != 1)
    return false;
  if (weight.device() != dev || weight.scalar_type() != at::kFloat || weight.dim() != 1 || weight.size(0) != E ||
      !weight.is_contiguous())
    return false;
  if (n_groups < 1 || E % n_groups != 0 || !float_type(out_dtype)) return false;
  const int V = chunk_width(y, xs, z, weight, E / n_groups);
  // Registers hold kGateMaxItems chunks per thread; shared memory (nchunks + n_groups floats) must
  // stay within the 48 KB a launch gets without opting in.
  return E / V <= static_cast<int64_t>(kGateMaxItems) * kGateMaxThreads && (E / V + n_groups) * 4 <= 48 * 1024;
}

at::Tensor mamba2_gated_norm(const at::Tensor& y, const at::Tensor& xs, const at::Tensor& D, const at::Tensor& z,
                             const at::Tensor& weight, int64_t n_groups, double eps, at::ScalarType out_dtype) {
  if (!mamba2_gated_norm_supports(y, xs, D, z, weight, n_groups, out_dtype))
    throw Error(fmt::format("mamba2_gated_norm: unsupported arguments (y: {}-d, xs: {}-d, z: {}-d, {} groups): "
                            "check mamba2_gated_norm_supports first",
                            y.defined() ? y.dim() : 0, xs.defined() ? xs.dim() : 0, z.defined() ? z.dim() : 0,
                            n_groups));
  c10::cuda::CUDAGuard guard(y.device());
  const int64_t B = y.size(0), H = y.size(1), T = y.size(2), P = y.size(3), E = H * P, Dg = E / n_groups;
  at::Tensor out = at::empty({B, T, E}, y.options().dtype(out_dtype));
  const int V = chunk_width(y, xs, z, weight, Dg);
  const int64_t nchunks = E / V;
  const int64_t items = std::max<int64_t>((nchunks + kGateMaxThreads - 1) / kGateMaxThreads, kWantItems);
  const int threads = static_cast<int>(std::min<int64_t>(kGateMaxThreads, ((nchunks + items - 1) / items + 31) / 32 * 32));

  NormParams p{};
  p.y = y.data_ptr();
  p.y_sb = y.stride(0);
  p.y_sh = y.stride(1);
  p.y_st = y.stride(2);
  if (xs.defined()) {
    p.xs = xs.data_ptr<float>();
    p.x_sb = xs.stride(0);
    p.x_st = xs.stride(1);
  }
  p.D = D.data_ptr<float>();
  p.z = z.data_ptr();
  p.z_sb = z.stride(0);
  p.z_st = z.stride(1);
  p.w = weight.data_ptr<float>();
  p.out = out.data_ptr();
  p.T = static_cast<int>(T);
  p.P = static_cast<int>(P);
  p.E = static_cast<int>(E);
  p.nchunks = static_cast<int>(nchunks);
  p.chunks_per_group = static_cast<int>(Dg / V);
  p.inv_n = 1.f / static_cast<float>(Dg);
  p.eps = static_cast<float>(eps);
  const size_t smem = static_cast<size_t>(nchunks + n_groups) * sizeof(float);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  with_type(z.scalar_type(), [&](auto tz) {
    using Tz = typename decltype(tz)::type;
    with_type(out_dtype, [&](auto to) {
      using Tout = typename decltype(to)::type;
      auto launch = [&](auto ty) {
        using Ty = typename decltype(ty)::type;
        if (V == 4)
          gated_norm_kernel<Ty, Tz, Tout, 4><<<static_cast<unsigned>(B * T), threads, smem, stream>>>(p);
        else
          gated_norm_kernel<Ty, Tz, Tout, 1><<<static_cast<unsigned>(B * T), threads, smem, stream>>>(p);
      };
      if (xs.defined()) launch(Tag<float>{});
      else launch(Tag<bf16>{});
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
