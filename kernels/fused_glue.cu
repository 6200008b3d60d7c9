// Fused CUDA glue kernels of the FoX block (see kernels/fused_glue.h).
//
// Row kernels (RMSNorm, group RMSNorm [* sigmoid(gate)], residual add + RMSNorm): one block
// per row, each thread holding up to kMaxItems chunks of 8 elements in registers (one read,
// one write); rows up to 8 * 1024 * kMaxItems elements. Group sums use xor shuffles inside
// aligned lane segments (group of 8 * 2^k elements, k <= 5), whole-row sums a block reduction.
// Elementwise kernels (SwiGLU, token shift, rotary): grid-stride over chunks of 8 elements.
// Chunks use 16-byte (bf16) or 2 x 16-byte (fp32) loads when the row length is a multiple of 8
// and every pointer is 16-byte aligned; otherwise a scalar path with the same arithmetic.
// Arithmetic follows the torch-op path op by op (the mixes use __f*_rn so nvcc cannot
// contract them into FMAs): results differ only by reduction order in the norms.
#include "kernels/fused_glue.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/cuda_types.cuh"
#include "kernels/env_switch.h"
#include "kernels/pdl.cuh"
#include "kernels/glue_layout.h"

namespace foxeval {
namespace {

constexpr int kGlueChunk = 8;
constexpr int kMaxItems = 4;
constexpr int kMaxThreads = 1024;

using cuda_types::bf16;
using cuda_types::from_f;
using cuda_types::to_f;

using cuda_types::load8;
using cuda_types::store8;

// N elements at p (N = 8 vectorized, or up to `valid` scalars, the rest 0).
template <bool VEC, typename T>
__device__ __forceinline__ void load_chunk(const T* p, int valid, float* v) {
  if constexpr (VEC) {
    load8(p, v);
  } else {
#pragma unroll
    for (int e = 0; e < kGlueChunk; ++e) v[e] = e < valid ? to_f(p[e]) : 0.f;
  }
}
template <bool VEC, typename T>
__device__ __forceinline__ void store_chunk(T* p, int valid, const float* v) {
  if constexpr (VEC) {
    store8(p, v);
  } else {
#pragma unroll
    for (int e = 0; e < kGlueChunk; ++e)
      if (e < valid) p[e] = from_f<T>(v[e]);
  }
}

using cuda_types::sigmoid_torch;
using cuda_types::silu_torch;

__device__ __forceinline__ float block_sum(float s, float* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  if (warp == 0) {
    float t = lane < nwarps ? red[lane] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    if (lane == 0) red[32] = t;
  }
  __syncthreads();
  return red[32];
}

// One row of D elements per block (mean = sum * (1/n) as ATen's mean). vpg = chunks per group (power of two <= 32), 0 = whole row.
// RESID: resid (fp32 [rows, D]) += x, normalizes the sum and writes it back to resid.
// ITEMS: chunks a thread may hold: 1 where the row fits in one chunk a thread (hidden sizes up
// to 8192). With kMaxItems registers capped occupancy at 47% and the gated group norm read at
// 1.6 TB/s; with 1, the 760M models' output norm + gate went 9.0 -> 5.5 ms at 64k (H100).
template <typename Tin, typename Tout, typename Tg, bool VEC, bool GATE, bool RESID, int ITEMS>
__global__ void __launch_bounds__(kMaxThreads) row_norm_kernel(const Tin* __restrict__ x, float* __restrict__ resid,
                                                               const float* __restrict__ w, const Tg* __restrict__ g,
                                                               Tout* __restrict__ y, int D, int64_t x_rs, int64_t g_rs,
                                                               int vpg, float inv_n, float eps, int y_heads, int64_t y_T) {
  __shared__ float red[33];
  pdl_trigger();  // a decode step's next matmul may start loading its weights (kernels/pdl.cuh)
  pdl_wait();
  // y and resid are [rows, D]; x and g may be rows of a wider matrix (row strides x_rs, g_rs).
  // y_heads > 0: rows are (b, t) of [B, y_T] and y is head-major [B, y_heads, y_T, D / y_heads].
  const int64_t row = blockIdx.x, base = row * D, x_base = row * x_rs, g_base = row * g_rs;
  const int y_dh = y_heads > 0 ? D / y_heads : D;
  const int64_t y_b = y_heads > 0 ? row / y_T : 0, y_t = y_heads > 0 ? row - y_b * y_T : 0;
  const int nchunks = (D + kGlueChunk - 1) / kGlueChunk;
  float v[ITEMS][kGlueChunk];
  float ss[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int c = threadIdx.x + k * blockDim.x;
    ss[k] = 0.f;
    if (c < nchunks) {
      const int off = c * kGlueChunk, valid = D - off;
      load_chunk<VEC>(x + x_base + off, valid, v[k]);
      if constexpr (RESID) {
        float r[kGlueChunk];
        load_chunk<VEC>(resid + base + off, valid, r);
#pragma unroll
        for (int e = 0; e < kGlueChunk; ++e) v[k][e] = __fadd_rn(r[e], v[k][e]);
        store_chunk<VEC>(resid + base + off, valid, v[k]);
      }
#pragma unroll
      for (int e = 0; e < kGlueChunk; ++e) ss[k] += v[k][e] * v[k][e];
    }
  }
  float rstd[ITEMS];
  if (vpg == 0) {
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s += ss[k];
    s = block_sum(s, red);
    const float r = rsqrtf(s * inv_n + eps);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) rstd[k] = r;
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      float s = ss[k];
      for (int o = vpg >> 1; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      rstd[k] = rsqrtf(s * inv_n + eps);
    }
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int c = threadIdx.x + k * blockDim.x;
    if (c < nchunks) {
      const int off = c * kGlueChunk, valid = D - off;
      float wt[kGlueChunk];
      load_chunk<VEC>(w + off, valid, wt);
      float o[kGlueChunk];
#pragma unroll
      for (int e = 0; e < kGlueChunk; ++e) o[e] = __fmul_rn(__fmul_rn(v[k][e], rstd[k]), wt[e]);
      if constexpr (GATE) {
        float gv[kGlueChunk];
        load_chunk<VEC>(g + g_base + off, valid, gv);
#pragma unroll
        for (int e = 0; e < kGlueChunk; ++e) o[e] = __fmul_rn(o[e], sigmoid_torch(gv[e]));
      }
      if (y_heads > 0) {  // a chunk never straddles a head (D / y_heads is a multiple of 8)
        const int head = off / y_dh;
        store_chunk<VEC>(y + ((y_b * y_heads + head) * y_T + y_t) * y_dh + (off - head * y_dh), valid, o);
      } else {
        store_chunk<VEC>(y + base + off, valid, o);
      }
    }
  }
}

template <typename Tin, typename Tout, bool VEC, bool SILU>
__global__ void swiglu_kernel(const Tin* __restrict__ y, Tout* __restrict__ out, int64_t rows, int64_t I) {
  pdl_trigger();  // the down projection may start loading its weights (kernels/pdl.cuh)
  pdl_wait();
  const int64_t cpr = (I + kGlueChunk - 1) / kGlueChunk, total = rows * cpr;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = idx / cpr, j = (idx - r * cpr) * kGlueChunk;
    const int valid = static_cast<int>(I - j < kGlueChunk ? I - j : kGlueChunk);
    float gt[kGlueChunk], up[kGlueChunk], o[kGlueChunk];
    load_chunk<VEC>(y + r * 2 * I + j, valid, gt);
    load_chunk<VEC>(y + r * 2 * I + I + j, valid, up);
#pragma unroll
    for (int e = 0; e < kGlueChunk; ++e) o[e] = __fmul_rn(SILU ? silu_torch(gt[e]) : sigmoid_torch(gt[e]), up[e]);
    store_chunk<VEC>(out + r * I + j, valid, o);
  }
}

// proj [B, T, C] (row stride p_rs), alpha [B, T, H] (row stride a_rs), prev [B, C], mask [B, T],
// out [B, T, C]; chunks never straddle a head (VEC needs Dh % 8 == 0; the scalar path takes one
// element per chunk).
template <typename T, typename Ta, bool VEC, bool PREV, bool MASK>
__global__ void token_shift_kernel(const T* __restrict__ proj, const Ta* __restrict__ alpha,
                                   const T* __restrict__ prev, const bool* __restrict__ mask, T* __restrict__ out,
                                   int64_t Tn, int64_t C, int64_t H, int64_t Dh, int64_t p_rs, int64_t a_rs,
                                   bool head_major, int64_t total) {
  constexpr int N = VEC ? kGlueChunk : 1;
  const int64_t cpr = C / N;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t bt = idx / cpr, c0 = (idx - bt * cpr) * N;
    const int64_t t = bt % Tn, b = bt / Tn;
    const float a = sigmoid_torch(to_f(alpha[bt * a_rs + c0 / Dh]));
    float cur[kGlueChunk], pv[kGlueChunk], o[kGlueChunk];
    if (MASK && mask[bt]) {
#pragma unroll
      for (int e = 0; e < kGlueChunk; ++e) cur[e] = 0.f;
    } else {
      load_chunk<VEC>(proj + bt * p_rs + c0, N, cur);
    }
    if (t == 0) {
      if (PREV) {
        load_chunk<VEC>(prev + b * C + c0, N, pv);
      } else {
#pragma unroll
        for (int e = 0; e < kGlueChunk; ++e) pv[e] = 0.f;
      }
    } else if (MASK && mask[bt - 1]) {
#pragma unroll
      for (int e = 0; e < kGlueChunk; ++e) pv[e] = 0.f;
    } else {
      load_chunk<VEC>(proj + (bt - 1) * p_rs + c0, N, pv);
    }
    const float na = __fsub_rn(1.f, a);
#pragma unroll
    for (int e = 0; e < kGlueChunk; ++e) o[e] = __fadd_rn(__fmul_rn(a, pv[e]), __fmul_rn(na, cur[e]));
    if (head_major) {  // out [B, H, T, Dh]
      const int64_t h = c0 / Dh;
      store_chunk<VEC>(out + ((b * H + h) * Tn + t) * Dh + (c0 - h * Dh), N, o);
    } else {
      store_chunk<VEC>(out + bt * C + c0, N, o);
    }
  }
}


// NeoX rotary embedding: x [rows = B*T*H, D], pairs (i, i + D/2); cos/sin of pos * inv_freq in
// fp32, rounded through x's dtype as the torch path does. VEC: 8 pairs per thread (D % 16 == 0).
// head_major: x and out are [B, H, T, D] buffers (rows (b, h, t)) instead of [B, T, H, D].
template <typename T, bool VEC>
__global__ void rotary_kernel(const T* __restrict__ x, const int64_t* __restrict__ pos,
                              const float* __restrict__ inv_freq, T* __restrict__ out, int64_t H, int64_t D,
                              int64_t Tn, bool head_major, int64_t total) {
  constexpr int N = VEC ? kGlueChunk : 1;
  const int64_t half = D / 2, cpr = half / N;
  for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t row = idx / cpr, i0 = (idx - row * cpr) * N;
    const float p = static_cast<float>(pos[head_major ? (row / (H * Tn)) * Tn + row % Tn : row / H]);
    float x0[kGlueChunk], x1[kGlueChunk], f[kGlueChunk], o0[kGlueChunk], o1[kGlueChunk];
    load_chunk<VEC>(x + row * D + i0, N, x0);
    load_chunk<VEC>(x + row * D + half + i0, N, x1);
    load_chunk<VEC>(inv_freq + i0, N, f);
#pragma unroll
    for (int e = 0; e < kGlueChunk; ++e) {
      const float a = __fmul_rn(p, f[e]);
      const float c = to_f(from_f<T>(cosf(a))), sn = to_f(from_f<T>(sinf(a)));
      o0[e] = __fsub_rn(__fmul_rn(x0[e], c), __fmul_rn(x1[e], sn));
      o1[e] = __fadd_rn(__fmul_rn(x0[e], sn), __fmul_rn(x1[e], c));
    }
    store_chunk<VEC>(out + row * D + i0, N, o0);
    store_chunk<VEC>(out + row * D + half + i0, N, o1);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

bool fdtype(at::ScalarType t) { return t == at::kFloat || t == at::kBFloat16; }

// FOXEVAL_FUSED_GLUE=0 turns every kernel off (callers take their torch-op paths): A/B timing.
bool enabled() { return fused_glue_on(); }

// t itself when its rows are evenly spaced, else a contiguous copy; `rs` gets the row stride.
at::Tensor rows_of(const at::Tensor& t, int64_t& rs) {
  rs = uniform_row_stride(t);
  if (rs >= 0) return t;
  at::Tensor c = t.contiguous();
  rs = c.size(-1);
  return c;
}

template <typename F>
void with_glue_type(at::ScalarType t, F&& f) {
  if (t == at::kFloat)
    f(float{});
  else
    f(bf16{});
}

template <typename T>
T* ptr(const at::Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

int elementwise_blocks(int64_t total, int threads) {
  const int64_t want = (total + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(at::cuda::getCurrentDeviceProperties()->multiProcessorCount) * 32;
  return static_cast<int>(want < cap ? (want > 0 ? want : 1) : cap);
}

// Shared launcher of the row kernel. x_in: the tensor read (delta when resid is defined).

// head_major: x is [B, T, D] and y comes back as [B, T, G, D / G] over a [B, G, T, D / G] buffer.
at::Tensor launch_row_norm(const at::Tensor& x_in, const at::Tensor& resid, const at::Tensor& weight,
                           const at::Tensor& gate, int64_t num_groups, double eps, at::ScalarType out_dtype,
                           bool head_major = false) {
  const int64_t D = x_in.size(-1);
  if (D <= 0 || num_groups <= 0 || D % num_groups != 0) return {};
  const int64_t Dg = D / num_groups;
  int vpg = 0;
  if (num_groups > 1) {
    if (Dg % kGlueChunk != 0) return {};
    const int64_t v = Dg / kGlueChunk;
    if (v > 32 || (v & (v - 1)) != 0) return {};
    vpg = static_cast<int>(v);
  }
  const int64_t nchunks = (D + kGlueChunk - 1) / kGlueChunk;
  const int64_t items = (nchunks + kMaxThreads - 1) / kMaxThreads;
  if (items > kMaxItems) return {};
  int threads = static_cast<int>((nchunks + items - 1) / items);
  threads = (threads + 31) / 32 * 32;

  c10::cuda::CUDAGuard guard(x_in.device());
  int64_t x_rs = D, g_rs = D;
  // The residual's delta is read as it comes (rows of x_in); y and resid are contiguous.
  at::Tensor x = rows_of(x_in, x_rs);
  at::Tensor w = weight.contiguous();
  at::Tensor g = gate.defined() ? rows_of(gate, g_rs) : at::Tensor();
  const auto y_opts = x.options().dtype(out_dtype).memory_format(at::MemoryFormat::Contiguous);
  at::Tensor y = head_major ? empty_head_major(x.size(0), x.size(1), num_groups, Dg, y_opts) : at::empty(x.sizes(), y_opts);
  const int64_t rows = x.numel() / D;
  if (rows == 0) return y;
  bool vec = D % kGlueChunk == 0 && x_rs % kGlueChunk == 0 && cuda_types::aligned(x.data_ptr(), 16) && cuda_types::aligned(w.data_ptr(), 16) &&
             cuda_types::aligned(y.data_ptr(), 16);
  if (g.defined()) vec = vec && g_rs % kGlueChunk == 0 && cuda_types::aligned(g.data_ptr(), 16);
  if (resid.defined()) vec = vec && cuda_types::aligned(resid.data_ptr(), 16);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  const float n = 1.f / static_cast<float>(vpg ? Dg : D), feps = static_cast<float>(eps);
  const int Di = static_cast<int>(D);

  with_glue_type(x.scalar_type(), [&](auto tin) {
    using Tin = decltype(tin);
    with_glue_type(out_dtype, [&](auto tout) {
      using Tout = decltype(tout);
      auto go = [&](auto tg, auto vec_c, auto gate_c, auto resid_c) {
        using Tg = decltype(tg);
        constexpr bool V = decltype(vec_c)::value, G = decltype(gate_c)::value, R = decltype(resid_c)::value;
        auto kernel = row_norm_kernel<Tin, Tout, Tg, V, G, R, kMaxItems>;
        if constexpr (V)
          if (items == 1) kernel = row_norm_kernel<Tin, Tout, Tg, V, G, R, 1>;
        launch_dependent(kernel, dim3(static_cast<unsigned>(rows)), dim3(threads), 0, stream,
            ptr<const Tin>(x), R ? ptr<float>(resid) : nullptr, ptr<const float>(w),
            G ? ptr<const Tg>(g) : nullptr, ptr<Tout>(y), Di, x_rs, g_rs, vpg, n, feps,
            head_major ? static_cast<int>(num_groups) : 0, head_major ? x.size(1) : int64_t(0));
      };
      using T_ = std::true_type;
      using F_ = std::false_type;
      auto by_vec = [&](auto tg, auto gate_c, auto resid_c) {
        if (vec)
          go(tg, T_{}, gate_c, resid_c);
        else
          go(tg, F_{}, gate_c, resid_c);
      };
      if (resid.defined()) {
        by_vec(float{}, F_{}, T_{});
      } else if (g.defined()) {
        with_glue_type(g.scalar_type(), [&](auto tg) { by_vec(tg, T_{}, F_{}); });
      } else {
        by_vec(float{}, F_{}, F_{});
      }
    });
  });
  return y;
}

bool norm_args_ok(const at::Tensor& x, const at::Tensor& weight, at::ScalarType out_dtype) {
  return x.is_cuda() && fdtype(x.scalar_type()) && fdtype(out_dtype) && x.dim() >= 1 && weight.is_cuda() &&
         weight.scalar_type() == at::kFloat && weight.dim() == 1 && weight.size(0) == x.size(-1) &&
         weight.device() == x.device();
}

}  // namespace

at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, at::ScalarType out_dtype) {
  if (!enabled() || !norm_args_ok(x, weight, out_dtype)) return {};
  return launch_row_norm(x, at::Tensor(), weight, at::Tensor(), 1, eps, out_dtype);
}

at::Tensor fused_group_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t num_groups, double eps,
                                at::ScalarType out_dtype, const at::Tensor& gate, bool head_major) {
  if (!enabled() || !norm_args_ok(x, weight, out_dtype)) return {};
  // Head-major rows need whole groups of 8-element chunks (the kernel's vpg path) and [B, T, D].
  if (head_major && (x.dim() != 3 || num_groups < 2 || gate.defined())) return {};
  if (gate.defined() && (!gate.is_cuda() || gate.device() != x.device() || !fdtype(gate.scalar_type()) ||
                         gate.sizes() != x.sizes()))
    return {};
  return launch_row_norm(x, at::Tensor(), weight, gate, num_groups, eps, out_dtype, head_major);
}

at::Tensor fused_add_rms_norm(at::Tensor& x, const at::Tensor& delta, const at::Tensor& weight, double eps,
                              at::ScalarType out_dtype) {
  if (!enabled() || !norm_args_ok(delta, weight, out_dtype)) return {};
  if (!x.is_cuda() || x.device() != delta.device() || x.scalar_type() != at::kFloat || !x.is_contiguous() ||
      x.sizes() != delta.sizes())
    return {};
  return launch_row_norm(delta, x, weight, at::Tensor(), 1, eps, out_dtype);
}

at::Tensor fused_swiglu(const at::Tensor& y_in, bool silu, at::ScalarType out_dtype) {
  if (!enabled() || !y_in.is_cuda() || !fdtype(y_in.scalar_type()) || !fdtype(out_dtype) || y_in.dim() < 1 ||
      y_in.size(-1) % 2 != 0)
    return {};
  c10::cuda::CUDAGuard guard(y_in.device());
  at::Tensor y = y_in.contiguous();
  const int64_t I = y.size(-1) / 2;
  auto shape = y.sizes().vec();
  shape.back() = I;
  at::Tensor out = at::empty(shape, y.options().dtype(out_dtype));
  if (out.numel() == 0) return out;
  const int64_t rows = y.numel() / (2 * I);
  const bool vec = I % kGlueChunk == 0 && cuda_types::aligned(y.data_ptr(), 16) && cuda_types::aligned(out.data_ptr(), 16);
  const int64_t total = rows * ((I + kGlueChunk - 1) / kGlueChunk);
  const int threads = 256, blocks = elementwise_blocks(total, threads);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  with_glue_type(y.scalar_type(), [&](auto tin) {
    using Tin = decltype(tin);
    with_glue_type(out_dtype, [&](auto tout) {
      using Tout = decltype(tout);
      auto go = [&](auto vec_c, auto silu_c) {
        launch_dependent(swiglu_kernel<Tin, Tout, decltype(vec_c)::value, decltype(silu_c)::value>, dim3(blocks),
                         dim3(threads), 0, stream, ptr<const Tin>(y), ptr<Tout>(out), rows, I);
      };
      if (vec)
        silu ? go(std::true_type{}, std::true_type{}) : go(std::true_type{}, std::false_type{});
      else
        silu ? go(std::false_type{}, std::true_type{}) : go(std::false_type{}, std::false_type{});
    });
  });
  return out;
}

at::Tensor fused_token_shift(const at::Tensor& proj_in, const at::Tensor& alpha_in, const at::Tensor& prev_in,
                             const at::Tensor& mask_in, bool head_major) {
  if (!enabled() || !proj_in.is_cuda() || proj_in.dim() != 3 || !fdtype(proj_in.scalar_type())) return {};
  const int64_t B = proj_in.size(0), Tn = proj_in.size(1), C = proj_in.size(2);
  if (!alpha_in.is_cuda() || alpha_in.dim() != 3 || !fdtype(alpha_in.scalar_type()) || alpha_in.size(0) != B ||
      alpha_in.size(1) != Tn)
    return {};
  const int64_t H = alpha_in.size(2);
  if (H <= 0 || C % H != 0) return {};
  const int64_t Dh = C / H;
  if (prev_in.defined() && (!prev_in.is_cuda() || prev_in.numel() != B * C)) return {};
  if (mask_in.defined() && (!mask_in.is_cuda() || mask_in.scalar_type() != at::kBool || mask_in.numel() != B * Tn))
    return {};
  c10::cuda::CUDAGuard guard(proj_in.device());
  int64_t p_rs = C, a_rs = H;
  at::Tensor proj = rows_of(proj_in, p_rs), alpha = rows_of(alpha_in, a_rs);
  // The state is stored in proj's dtype; a cast changes nothing then.
  at::Tensor prev = prev_in.defined() ? prev_in.to(proj.scalar_type()).contiguous() : at::Tensor();
  at::Tensor mask = mask_in.defined() ? mask_in.contiguous() : at::Tensor();
  at::Tensor out = head_major ? empty_head_major(B, Tn, H, Dh, proj.options()) : at::empty({B, Tn, C}, proj.options());
  if (out.numel() == 0) return out;
  bool vec = Dh % kGlueChunk == 0 && p_rs % kGlueChunk == 0 && cuda_types::aligned(proj.data_ptr(), 16) && cuda_types::aligned(out.data_ptr(), 16);
  if (prev.defined()) vec = vec && cuda_types::aligned(prev.data_ptr(), 16);
  const int64_t total = B * Tn * (vec ? C / kGlueChunk : C);
  const int threads = 256, blocks = elementwise_blocks(total, threads);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  with_glue_type(proj.scalar_type(), [&](auto tp) {
    using T = decltype(tp);
    with_glue_type(alpha.scalar_type(), [&](auto ta) {
      using Ta = decltype(ta);
      auto go = [&](auto vec_c, auto prev_c, auto mask_c) {
        constexpr bool V = decltype(vec_c)::value, P = decltype(prev_c)::value, M = decltype(mask_c)::value;
        token_shift_kernel<T, Ta, V, P, M><<<blocks, threads, 0, stream>>>(
            ptr<const T>(proj), ptr<const Ta>(alpha), P ? ptr<const T>(prev) : nullptr,
            M ? ptr<const bool>(mask) : nullptr, ptr<T>(out), Tn, C, H, Dh, p_rs, a_rs, head_major, total);
      };
      using T_ = std::true_type;
      using F_ = std::false_type;
      auto by_pm = [&](auto vec_c) {
        if (prev.defined())
          mask.defined() ? go(vec_c, T_{}, T_{}) : go(vec_c, T_{}, F_{});
        else
          mask.defined() ? go(vec_c, F_{}, T_{}) : go(vec_c, F_{}, F_{});
      };
      if (vec)
        by_pm(T_{});
      else
        by_pm(F_{});
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

at::Tensor fused_rotary(const at::Tensor& x_in, const at::Tensor& positions, const at::Tensor& inv_freq) {
  if (!enabled() || !x_in.is_cuda() || x_in.dim() != 4 || !fdtype(x_in.scalar_type())) return {};
  const int64_t B = x_in.size(0), Tn = x_in.size(1), H = x_in.size(2), D = x_in.size(3);
  if (D % 2 != 0 || !positions.is_cuda() || positions.scalar_type() != at::kLong || positions.dim() != 2 ||
      positions.size(0) != B || positions.size(1) != Tn || !inv_freq.is_cuda() ||
      inv_freq.scalar_type() != at::kFloat || inv_freq.numel() != D / 2)
    return {};
  c10::cuda::CUDAGuard guard(x_in.device());
  // A head-major buffer seen as [B, T, H, D] (the q and k the normalizing kernels write) is read
  // and written as it is; anything else goes through a contiguous [B, T, H, D] copy.
  const bool head_major = !x_in.is_contiguous() && x_in.permute({0, 2, 1, 3}).is_contiguous();
  at::Tensor x = head_major ? x_in : x_in.contiguous(), pos = positions.contiguous(), f = inv_freq.contiguous();
  at::Tensor out = head_major ? empty_head_major(B, Tn, H, D, x.options()) : at::empty_like(x, at::MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  const bool vec = (D / 2) % kGlueChunk == 0 && cuda_types::aligned(x.data_ptr(), 16) && cuda_types::aligned(out.data_ptr(), 16) && cuda_types::aligned(f.data_ptr(), 16);
  const int64_t total = B * Tn * H * (vec ? D / 2 / kGlueChunk : D / 2);
  const int threads = 256, blocks = elementwise_blocks(total, threads);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  with_glue_type(x.scalar_type(), [&](auto tx) {
    using T = decltype(tx);
    auto go = [&](auto vec_c) {
      rotary_kernel<T, decltype(vec_c)::value><<<blocks, threads, 0, stream>>>(
          ptr<const T>(x), ptr<const int64_t>(pos), ptr<const float>(f), ptr<T>(out), H, D, Tn, head_major, total);
    };
    if (vec)
      go(std::true_type{});
    else
      go(std::false_type{});
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
