// Mamba-1's selective scan on the GPU (see kernels/selective_scan.h).
//
// Layout: a thread owns one (row b, channel e, state n); the LANES (8, 16 or 32 >= N) threads of a
// channel sit side by side in a warp, so y_t[e] = sum_n h C is a shuffle tree and the channel's
// x, dt, z are one broadcast load. A block holds 128 / LANES channels of one row; grid (channel
// blocks, B). Time is sequential: the recurrence h = exp(dt A) h + (dt B) x is one FMA chain, and
// the loads of the next kScanUnroll steps are issued before their math so the chain does not wait on
// memory. The state is read at the start and written at the end by the same thread: in place is
// safe. T = 1 is the decoding step (no host synchronisation, CUDA-graph safe).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <fmt/format.h>

#include <climits>

#include "data/errors.h"
#include "kernels/cuda_types.cuh"
#include "kernels/selective_scan.h"

namespace foxeval {
namespace {

using namespace cuda_types;  // bf16, f16, to_f, from_f, Tag, with_type

constexpr int kScanThreads = 128;
constexpr int kScanUnroll = 4;

struct ScanParams {
  const void *x, *z, *Bm, *Cm;  // x, z [B, T, E]; Bm, Cm [B, T, N] (last dim contiguous)
  int64_t x_sb, x_st, z_sb, z_st, b_sb, b_st, c_sb, c_st;
  const float* dt;  // [B, T, E] contiguous
  const float* A;   // [E, N]
  const float* D;   // [E]
  const float* h0;  // [B, E, N] or null (zeros)
  float* h1;        // [B, E, N] (may equal h0)
  void* out;        // [B, T, E] contiguous
  int T, E, N;
};

template <typename T, int LANES>
__global__ void __launch_bounds__(kScanThreads) selective_scan_kernel(const ScanParams p) {
  constexpr int kChannels = kScanThreads / LANES;
  const int lane = threadIdx.x % LANES;
  const int e = blockIdx.x * kChannels + threadIdx.x / LANES;
  const int b = blockIdx.y;
  // Threads past E or N stay in the loop with zeros so that every shuffle has the whole warp.
  const bool on = e < p.E && lane < p.N;
  const int ec = e < p.E ? e : p.E - 1;
  const int64_t hidx = (static_cast<int64_t>(b) * p.E + ec) * p.N + lane;
  const float A = on ? p.A[static_cast<int64_t>(ec) * p.N + lane] : 0.f;
  const float Dv = p.D[ec];
  float h = (on && p.h0) ? p.h0[hidx] : 0.f;

  const T* xb = static_cast<const T*>(p.x) + b * p.x_sb + ec;
  const T* zb = static_cast<const T*>(p.z) + b * p.z_sb + ec;
  const T* Bb = static_cast<const T*>(p.Bm) + b * p.b_sb + (lane < p.N ? lane : 0);
  const T* Cb = static_cast<const T*>(p.Cm) + b * p.c_sb + (lane < p.N ? lane : 0);
  const float* dtb = p.dt + static_cast<int64_t>(b) * p.T * p.E + ec;
  T* ob = static_cast<T*>(p.out) + static_cast<int64_t>(b) * p.T * p.E + ec;

  for (int t0 = 0; t0 < p.T; t0 += kScanUnroll) {
    float xv[kScanUnroll], zv[kScanUnroll], dtv[kScanUnroll], Bv[kScanUnroll], Cv[kScanUnroll];
#pragma unroll
    for (int u = 0; u < kScanUnroll; ++u) {  // the loads first: independent of h
      const int t = t0 + u < p.T ? t0 + u : p.T - 1;
      xv[u] = to_f(xb[t * p.x_st]);
      zv[u] = to_f(zb[t * p.z_st]);
      dtv[u] = dtb[static_cast<int64_t>(t) * p.E];
      Bv[u] = to_f(Bb[t * p.b_st]);
      Cv[u] = to_f(Cb[t * p.c_st]);
    }
#pragma unroll
    for (int u = 0; u < kScanUnroll; ++u) {
      if (t0 + u >= p.T) break;  // uniform across the block: no shuffle diverges
      const float dA = expf(A * dtv[u]);
      const float dBx = (dtv[u] * Bv[u]) * xv[u];
      h = on ? dA * h + dBx : 0.f;
      float s = h * Cv[u];
#pragma unroll
      for (int off = LANES / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      if (lane == 0 && e < p.E) {
        const float y = (s + Dv * xv[u]) * silu_torch(zv[u]);
        ob[static_cast<int64_t>(t0 + u) * p.E] = from_f<T>(y);
      }
    }
  }
  if (on) p.h1[hidx] = h;
}

bool last_dim_contiguous(const at::Tensor& t) { return t.size(-1) == 1 || t.stride(-1) == 1; }

}  // namespace

bool selective_scan_cuda_supports(const SelectiveScanArgs& a, const at::Tensor& state, at::ScalarType out_dtype) {
  for (const at::Tensor* t : {&a.x, &a.dt, &a.A, &a.Bm, &a.Cm, &a.D, &a.z})
    if (!t->defined() || !t->is_cuda() || t->device() != a.x.device()) return false;
  if (a.x.dim() != 3 || a.A.dim() != 2 || a.Bm.dim() != 3) return false;
  const int64_t B = a.x.size(0), T = a.x.size(1), E = a.x.size(2), N = a.A.size(1);
  if (B < 1 || T < 1 || E < 1 || N < 1 || N > 32 || B > 65535 || T > INT_MAX / 2 || E > INT_MAX / 2) return false;
  const at::ScalarType dt = a.x.scalar_type();
  if (!float_type(dt) || out_dtype != dt) return false;
  for (const at::Tensor* t : {&a.z, &a.Bm, &a.Cm})
    if (t->scalar_type() != dt || !last_dim_contiguous(*t)) return false;
  if (!last_dim_contiguous(a.x)) return false;
  if (a.z.sizes() != a.x.sizes() || a.dt.sizes() != a.x.sizes() || a.Bm.size(0) != B || a.Bm.size(1) != T ||
      a.Bm.size(2) != N || a.Cm.sizes() != a.Bm.sizes() || a.A.size(0) != E || a.D.dim() != 1 || a.D.size(0) != E)
    return false;
  for (const at::Tensor* t : {&a.dt, &a.A, &a.D})
    if (t->scalar_type() != at::kFloat || !t->is_contiguous()) return false;
  if (state.defined() && (state.device() != a.x.device() || state.scalar_type() != at::kFloat || state.dim() != 3 ||
                          state.size(0) != B || state.size(1) != E || state.size(2) != N || !state.is_contiguous()))
    return false;
  return true;
}

at::Tensor selective_scan_cuda(const SelectiveScanArgs& a, at::Tensor& state, at::ScalarType out_dtype) {
  if (!selective_scan_cuda_supports(a, state, out_dtype))
    throw Error("selective_scan_cuda: unsupported arguments: check selective_scan_cuda_supports first");
  c10::cuda::CUDAGuard guard(a.x.device());
  const int64_t B = a.x.size(0), T = a.x.size(1), E = a.x.size(2), N = a.A.size(1);
  at::Tensor out = at::empty({B, T, E}, a.x.options().dtype(out_dtype));
  ScanParams p{};
  p.x = a.x.data_ptr();
  p.z = a.z.data_ptr();
  p.Bm = a.Bm.data_ptr();
  p.Cm = a.Cm.data_ptr();
  p.x_sb = a.x.stride(0), p.x_st = a.x.stride(1);
  p.z_sb = a.z.stride(0), p.z_st = a.z.stride(1);
  p.b_sb = a.Bm.stride(0), p.b_st = a.Bm.stride(1);
  p.c_sb = a.Cm.stride(0), p.c_st = a.Cm.stride(1);
  p.dt = a.dt.data_ptr<float>();
  p.A = a.A.data_ptr<float>();
  p.D = a.D.data_ptr<float>();
  if (state.defined()) {
    p.h0 = state.data_ptr<float>();  // updated in place
  } else {
    state = at::empty({B, E, N}, a.x.options().dtype(at::kFloat));
  }
  p.h1 = state.data_ptr<float>();
  p.out = out.data_ptr();
  p.T = static_cast<int>(T);
  p.E = static_cast<int>(E);
  p.N = static_cast<int>(N);
  const int lanes = N <= 8 ? 8 : N <= 16 ? 16 : 32;
  const int channels = kScanThreads / lanes;
  const dim3 grid(static_cast<unsigned>((E + channels - 1) / channels), static_cast<unsigned>(B));
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  with_type(a.x.scalar_type(), [&](auto tag) {
    using Tin = typename decltype(tag)::type;
    if (lanes == 8)
      selective_scan_kernel<Tin, 8><<<grid, kScanThreads, 0, stream>>>(p);
    else if (lanes == 16)
      selective_scan_kernel<Tin, 16><<<grid, kScanThreads, 0, stream>>>(p);
    else
      selective_scan_kernel<Tin, 32><<<grid, kScanThreads, 0, stream>>>(p);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
