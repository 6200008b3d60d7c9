// The FoX decode step's glue in one kernel (see kernels/fox_decode.h). One block per (head,
// slot), one thread per element of the head (D = 64 or 128 threads).
#include "kernels/fox_decode.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_types.cuh"
#include "kernels/env_switch.h"
#include "kernels/pdl.cuh"

namespace foxeval {
namespace {

using namespace cuda_types;

struct Params {
  const void* proj;
  int64_t proj_stride;  // elements between slots' rows
  int q_off, k_off, v_off, ks_off, vs_off, f_off, og_off, og_dim;
  int H, C;
  bool ring;  // position p at p % C (a sliding window's ring)
  const float* q_norm;
  const float* k_norm;
  float qk_eps;
  const float* inv_freq;
  const int64_t* len;
  void* keys;
  void* values;
  float* cum;
  void* k_state;
  void* v_state;
  void* q_out;
  void* g_out;
};

__device__ __forceinline__ float sigmoid_(float x) { return 1.f / (1.f + expf(-x)); }  // as torch
__device__ __forceinline__ float log_sigmoid_(float x) {                                 // as torch's CUDA kernel
  return fminf(0.f, x) - log1pf(expf(-fabsf(x)));
}

// Sum over the block's D threads.
template <int D>
__device__ __forceinline__ float head_sum(float v, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // red may still be read by an earlier call
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int w = 0; w < D / 32; ++w) s += red[w];
  return s;
}

// RMSNorm over the head (the fused group norm's arithmetic: (x * rstd) * w, rounded to T).
template <typename T, int D>
__device__ __forceinline__ float head_norm(float x, const float* w, int e, float eps, float* red) {
  const float ss = head_sum<D>(x * x, red);
  const float rstd = rsqrtf(ss * (1.f / D) + eps);
  return to_f(from_f<T>(__fmul_rn(__fmul_rn(x, rstd), w[e])));
}

// NeoX rotary at position p of x (this thread's element i of the head; partner via shared memory).
template <typename T, int D>
__device__ __forceinline__ float rotate(float x, int i, float p, const float* inv_freq, float* buf) {
  __syncthreads();
  buf[i] = x;
  __syncthreads();
  constexpr int half = D / 2;
  const int j = i < half ? i : i - half;
  const float a = __fmul_rn(p, inv_freq[j]);
  const float c = to_f(from_f<T>(cosf(a))), sn = to_f(from_f<T>(sinf(a)));
  const float x0 = buf[j], x1 = buf[j + half];
  const float o = i < half ? __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, sn)) : __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, c));
  return to_f(from_f<T>(o));
}

template <typename T, int D>
__global__ void __launch_bounds__(D) fox_decode_prep_kernel(Params p) {
  __shared__ float red[D / 32];
  __shared__ float buf[D];
  pdl_wait();  // launched as a programmatic dependent of the input projection (kernels/pdl.cuh)
  pdl_trigger();
  const int h = blockIdx.x, s = blockIdx.y, i = threadIdx.x, H = p.H;
  const int e = h * D + i;  // this thread's element of the [H * D] rows
  const T* row = static_cast<const T*>(p.proj) + s * p.proj_stride;
  const int64_t n = p.len[s];
  const int64_t w = p.ring ? n % p.C : (n < p.C - 1 ? n : p.C - 1);
  const int64_t prev = p.ring ? (w + p.C - 1) % p.C : (w > 0 ? w - 1 : 0);

  // Token shift of k and v (state := this token's projection, before the shift).
  float k = to_f(row[p.k_off + e]), v = to_f(row[p.v_off + e]);
  if (p.ks_off >= 0) {
    T* st = static_cast<T*>(p.k_state) + s * (int64_t)H * D + e;
    const float a = sigmoid_(to_f(row[p.ks_off + h])), na = __fsub_rn(1.f, a);
    const float pv = to_f(*st);
    *st = row[p.k_off + e];
    k = to_f(from_f<T>(__fadd_rn(__fmul_rn(a, pv), __fmul_rn(na, k))));
  }
  if (p.vs_off >= 0) {
    T* st = static_cast<T*>(p.v_state) + s * (int64_t)H * D + e;
    const float a = sigmoid_(to_f(row[p.vs_off + h])), na = __fsub_rn(1.f, a);
    const float pv = to_f(*st);
    *st = row[p.v_off + e];
    v = to_f(from_f<T>(__fadd_rn(__fmul_rn(a, pv), __fmul_rn(na, v))));
  }
  float q = to_f(row[p.q_off + e]);
  if (p.q_norm) {
    q = head_norm<T, D>(q, p.q_norm, e, p.qk_eps, red);
    k = head_norm<T, D>(k, p.k_norm, e, p.qk_eps, red);
  }
  if (p.inv_freq) {
    const float pos = static_cast<float>(n);
    q = rotate<T, D>(q, i, pos, p.inv_freq, buf);
    k = rotate<T, D>(k, i, pos, p.inv_freq, buf);
  }
  const int64_t cache_row = ((int64_t)s * H + h) * p.C;
  static_cast<T*>(p.keys)[(cache_row + w) * D + i] = from_f<T>(k);
  static_cast<T*>(p.values)[(cache_row + w) * D + i] = from_f<T>(v);
  static_cast<T*>(p.q_out)[((int64_t)s * H + h) * D + i] = from_f<T>(q);
  if (i == 0) {
    const float lf = p.f_off >= 0 ? log_sigmoid_(to_f(row[p.f_off + h])) : 0.f;
    const float c = p.cum[cache_row + prev];
    p.cum[cache_row + w] = __fadd_rn(lf, c);
  }
  if (p.og_off >= 0) {  // the output gate's slice, copied contiguous (each block its share)
    T* g = static_cast<T*>(p.g_out) + (int64_t)s * p.og_dim;
    for (int j = h * D + i; j < p.og_dim; j += H * D) g[j] = row[p.og_off + j];
  }
}

bool same_device(const at::Tensor& t, const at::Tensor& ref) { return t.is_cuda() && t.device() == ref.device(); }

}  // namespace

bool fox_decode_prep_enabled() { return fused_glue_on(); }

bool fox_decode_prep_supports(const FoxDecodePrep& a) {
  if (!fused_glue_on() || !a.proj.defined() || !a.proj.is_cuda() || !float_type(a.proj.scalar_type())) return false;
  const int64_t H = a.heads, D = a.head_dim;
  if ((D != 64 && D != 128) || H < 1) return false;
  const at::Tensor& x = a.proj;
  if (x.stride(-1) != 1 || x.size(-1) < 1) return false;
  const int64_t S = x.numel() / x.size(-1);
  if (x.dim() == 3 && x.size(1) != 1) return false;
  const auto dt = x.scalar_type();
  auto cache_ok = [&](const at::Tensor& t) {
    return t.defined() && same_device(t, x) && t.scalar_type() == dt && t.is_contiguous() && t.dim() == 4 &&
           t.size(0) == S && t.size(1) == H && t.size(3) == D;
  };
  if (!cache_ok(a.keys) || !cache_ok(a.values) || a.values.size(2) != a.keys.size(2)) return false;
  const int64_t C = a.keys.size(2);
  const at::Tensor& c = a.cum_log_fgate;
  if (!c.defined() || !same_device(c, x) || c.scalar_type() != at::kFloat || !c.is_contiguous() ||
      c.sizes() != at::IntArrayRef({S, H, C}))
    return false;
  if (!a.len.defined() || !same_device(a.len, x) || a.len.scalar_type() != at::kLong || !a.len.is_contiguous() ||
      a.len.numel() != S)
    return false;
  auto state_ok = [&](int64_t off, const at::Tensor& st) {
    if (off < 0) return true;
    return st.defined() && same_device(st, x) && st.scalar_type() == dt && st.is_contiguous() &&
           st.sizes() == at::IntArrayRef({S, H * D});
  };
  if (!state_ok(a.ks_off, a.k_state) || !state_ok(a.vs_off, a.v_state)) return false;
  auto norm_ok = [&](const at::Tensor& w) {
    return w.defined() && same_device(w, x) && w.scalar_type() == at::kFloat && w.is_contiguous() && w.numel() == H * D;
  };
  if (a.q_norm.defined() != a.k_norm.defined()) return false;
  if (a.q_norm.defined() && (!norm_ok(a.q_norm) || !norm_ok(a.k_norm))) return false;
  if (a.inv_freq.defined() && (!same_device(a.inv_freq, x) || a.inv_freq.scalar_type() != at::kFloat ||
                               !a.inv_freq.is_contiguous() || a.inv_freq.numel() != D / 2))
    return false;
  const int64_t N = x.size(-1);
  auto in = [&](int64_t off, int64_t len) { return off < 0 || (off + len <= N); };
  if (a.q_off < 0 || a.k_off < 0 || a.v_off < 0 || !in(a.q_off, H * D) || !in(a.k_off, H * D) || !in(a.v_off, H * D) ||
      !in(a.ks_off, H) || !in(a.vs_off, H) || !in(a.f_off, H) || !in(a.og_off, a.og_dim))
    return false;
  if (a.og_off >= 0 && a.og_dim < 1) return false;
  return C >= 1 && N < (int64_t(1) << 31) && S * H * C * D < (int64_t(1) << 62);
}

std::pair<at::Tensor, at::Tensor> fox_decode_prep(const FoxDecodePrep& a) {
  if (!fox_decode_prep_supports(a)) throw std::invalid_argument("fox_decode_prep: unsupported arguments");
  const at::Tensor& x = a.proj;
  const int64_t S = x.numel() / x.size(-1), H = a.heads, D = a.head_dim;
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor q = at::empty({S, H, 1, D}, x.options());
  at::Tensor g = a.og_off >= 0 ? at::empty({S, 1, a.og_dim}, x.options()) : at::Tensor();
  Params p{};
  p.proj = x.data_ptr();
  p.proj_stride = x.dim() >= 2 ? x.stride(0) : x.size(-1);
  p.q_off = static_cast<int>(a.q_off);
  p.k_off = static_cast<int>(a.k_off);
  p.v_off = static_cast<int>(a.v_off);
  p.ks_off = static_cast<int>(a.ks_off);
  p.vs_off = static_cast<int>(a.vs_off);
  p.f_off = static_cast<int>(a.f_off);
  p.og_off = static_cast<int>(a.og_off);
  p.og_dim = static_cast<int>(a.og_dim);
  p.H = static_cast<int>(H);
  p.C = static_cast<int>(a.keys.size(2));
  p.ring = a.ring;
  p.q_norm = a.q_norm.defined() ? a.q_norm.data_ptr<float>() : nullptr;
  p.k_norm = a.k_norm.defined() ? a.k_norm.data_ptr<float>() : nullptr;
  p.qk_eps = static_cast<float>(a.qk_eps);
  p.inv_freq = a.inv_freq.defined() ? a.inv_freq.data_ptr<float>() : nullptr;
  p.len = a.len.data_ptr<int64_t>();
  p.keys = a.keys.data_ptr();
  p.values = a.values.data_ptr();
  p.cum = a.cum_log_fgate.data_ptr<float>();
  p.k_state = a.ks_off >= 0 ? a.k_state.data_ptr() : nullptr;
  p.v_state = a.vs_off >= 0 ? a.v_state.data_ptr() : nullptr;
  p.q_out = q.data_ptr();
  p.g_out = g.defined() ? g.data_ptr() : nullptr;
  const dim3 grid(static_cast<unsigned>(H), static_cast<unsigned>(S));
  auto stream = at::cuda::getCurrentCUDAStream();
  with_type(x.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (D == 64)
      launch_dependent(fox_decode_prep_kernel<T, 64>, grid, dim3(64), 0, stream.stream(), p);
    else
      launch_dependent(fox_decode_prep_kernel<T, 128>, grid, dim3(128), 0, stream.stream(), p);
  });
  return {q, g};
}

}  // namespace foxeval
