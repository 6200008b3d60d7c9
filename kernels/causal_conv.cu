// Fused depthwise causal convolution (see kernels/causal_conv.h).
//
// Layout: a thread owns V channels (V = 4: one 16-byte fp32 / 8-byte 16-bit access per row;
// V = 1 where C, the strides or the pointers do not allow it) of one row b and a tile of kTile
// consecutive time steps. It keeps the last K-1 inputs of its channels in registers (a sliding
// window), so x is read (kTile + K - 1) / kTile times and the output written once. Grid:
// (channel blocks of kThreads threads, time tiles, B). T == 1 (decode) is the same kernel with
// one time tile.
//
// The history and the state: only the threads of the first time tile (t0 = 0) read the old
// history, and those same threads write the new state after their loop (the last K-1 entries of
// cat(history, x), reading x again or their saved copy of the history where T < K-1). So the
// state can be updated in place without a race: no other thread touches those addresses.
#include "kernels/causal_conv.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "data/errors.h"
#include "kernels/cuda_types.cuh"

namespace foxeval {
namespace {

using namespace cuda_types;  // bf16, f16, to_f, from_f, Tag, with_type, aligned

constexpr int kTile = 16;     // time steps per thread (>= K - 1, see the history rule above)
constexpr int kThreads = 64;  // threads per block along the channels
constexpr int kMaxK = 4;
static_assert(kTile >= kMaxK - 1, "the first time tile must cover the whole history");

// Rounding points of the epilogue.
enum RoundCode : int { kNoRound = 0, kRoundBf16 = 1, kRoundF16 = 2 };

__device__ __forceinline__ float round_through(float v, int code) {
  if (code == kRoundBf16) return __bfloat162float(__float2bfloat16_rn(v));
  if (code == kRoundF16) return __half2float(__float2half_rn(v));
  return v;
}

// 4 elements: fp32 one 16-byte access, 16-bit types one 8-byte access.
__device__ __forceinline__ void load4(const float* p, float* v) {
  const float4 a = *reinterpret_cast<const float4*>(p);
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
}
template <typename T>
__device__ __forceinline__ void load4(const T* p, float* v) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const T* h = reinterpret_cast<const T*>(&u);
#pragma unroll
  for (int e = 0; e < 4; ++e) v[e] = to_f(h[e]);
}
__device__ __forceinline__ void store4(float* p, const float* v) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
template <typename T>
__device__ __forceinline__ void store4(T* p, const float* v) {
  uint2 u;
  T* h = reinterpret_cast<T*>(&u);
#pragma unroll
  for (int e = 0; e < 4; ++e) h[e] = from_f<T>(v[e]);
  *reinterpret_cast<uint2*>(p) = u;
}
template <int V, typename T>
__device__ __forceinline__ void load_vec(const T* p, float* v) {
  if constexpr (V == 4) load4(p, v); else v[0] = to_f(*p);
}
template <int V, typename T>
__device__ __forceinline__ void store_vec(T* p, const float* v) {
  if constexpr (V == 4) store4(p, v); else *p = from_f<T>(v[0]);
}

struct ConvParams {
  const void* x;
  int64_t x_sb, x_st;  // element strides of x's rows and time steps (channels contiguous)
  const float* w;      // [C, K]
  const float* bias;   // [C] or null
  const bool* mask;    // [B, T] (true = real) or null
  int64_t m_sb, m_st;
  const float* hist;   // [B, K-1, C] old history, or null (zeros)
  float* state;        // [B, K-1, C] new state, or null; may equal hist (in place)
  void* out;           // [B, T, C]
  int T, C;
  int silu, round_before, round_after;
};

template <typename Tin, typename Tout, int K, int V>
__global__ void __launch_bounds__(kThreads) causal_conv_kernel(const ConvParams p) {
  const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (c0 >= p.C) return;
  const int b = blockIdx.z, t0 = blockIdx.y * kTile, t1 = min(t0 + kTile, p.T);
  const Tin* xb = static_cast<const Tin*>(p.x) + b * p.x_sb + c0;
  const bool* mb = p.mask ? p.mask + b * p.m_sb : nullptr;
  // x[b, t, c0..c0+V) as fp32; padded positions as +0 (what masked_fill(.., 0.0) writes).
  auto load_x = [&](int t, float* v) {
    if (mb && !mb[t * p.m_st]) {
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] = 0.f;
    } else {
      load_vec<V>(xb + t * p.x_st, v);
    }
  };

  float w[K][V], acc0[V];
#pragma unroll
  for (int e = 0; e < V; ++e) {
#pragma unroll
    for (int j = 0; j < K; ++j) w[j][e] = p.w[static_cast<int64_t>(c0 + e) * K + j];
    acc0[e] = p.bias ? p.bias[c0 + e] : 0.f;  // ATen: bias.clone(), or zeros, then the adds
  }

  // win[i] = xp at time t - (K-1) + i for the next output t (xp = cat(history, x)).
  float win[K - 1][V], old[K - 1][V];
#pragma unroll
  for (int i = 0; i < K - 1; ++i) {
    const int t = t0 - (K - 1) + i;
    if (t >= 0) {
      load_x(t, win[i]);
    } else if (p.hist) {
      load_vec<V>(p.hist + (static_cast<int64_t>(b) * (K - 1) + (t + K - 1)) * p.C + c0, win[i]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) win[i][e] = 0.f;
    }
#pragma unroll
    for (int e = 0; e < V; ++e) old[i][e] = win[i][e];  // the whole old history when t0 == 0
  }

  Tout* ob = static_cast<Tout*>(p.out) + static_cast<int64_t>(b) * p.T * p.C + c0;
  for (int t = t0; t < t1; ++t) {
    float cur[V], o[V];
    load_x(t, cur);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      // The ATen order: (((bias + x[t-K+1] w0) + x[t-K+2] w1) + ...) + x[t] w_{K-1}, each
      // product rounded before its add (no FMA).
      float acc = acc0[e];
#pragma unroll
      for (int j = 0; j < K - 1; ++j) acc = __fadd_rn(acc, __fmul_rn(win[j][e], w[j][e]));
      acc = __fadd_rn(acc, __fmul_rn(cur[e], w[K - 1][e]));
      float y = round_through(acc, p.round_before);
      if (p.silu) y = __fdiv_rn(y, __fadd_rn(1.f, expf(-y)));  // ATen: x / (1 + exp(-x)) in fp32
      o[e] = round_through(y, p.round_after);
    }
    store_vec<V>(ob + static_cast<int64_t>(t) * p.C, o);
#pragma unroll
    for (int i = 0; i < K - 2; ++i)
#pragma unroll
      for (int e = 0; e < V; ++e) win[i][e] = win[i + 1][e];
#pragma unroll
    for (int e = 0; e < V; ++e) win[K - 2][e] = cur[e];
  }

  // New state = xp[T .. T+K-2]: x where T + i >= K - 1, else the saved old history.
  if (p.state && blockIdx.y == 0) {
#pragma unroll
    for (int i = 0; i < K - 1; ++i) {
      const int s = p.T + i;
      float v[V];
      if (s >= K - 1) {
        load_x(s - (K - 1), v);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v[e] = 0.f;
#pragma unroll
        for (int q = 0; q < K - 1; ++q)
          if (q == s)
#pragma unroll
            for (int e = 0; e < V; ++e) v[e] = old[q][e];
      }
      store_vec<V>(p.state + (static_cast<int64_t>(b) * (K - 1) + i) * p.C + c0, v);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.

int round_code(at::ScalarType t) {
  if (t == at::kBFloat16) return kRoundBf16;
  if (t == at::kHalf) return kRoundF16;
  return kNoRound;
}


}  // namespace

bool causal_conv_cuda_supports(const at::Tensor& x, const at::Tensor& weight, const at::Tensor* state,
                               const CausalConvSpec& spec) {
  if (!x.defined() || !x.is_cuda() || x.dim() != 3 || !float_type(x.scalar_type())) return false;
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  if (B < 1 || T < 1 || C < 1 || (C > 1 && x.stride(2) != 1)) return false;
  if (B > 65535 || (T + kTile - 1) / kTile > 65535 || T > INT_MAX / 2 || C > INT_MAX / 2) return false;
  const auto dev = x.device();
  if (!weight.defined() || weight.device() != dev || weight.scalar_type() != at::kFloat || weight.dim() != 2 ||
      weight.size(0) != C || weight.size(1) < 2 || weight.size(1) > kMaxK || !weight.is_contiguous())
    return false;
  const int64_t K = weight.size(1);
  if (spec.bias.defined() && (spec.bias.device() != dev || spec.bias.scalar_type() != at::kFloat ||
                              spec.bias.dim() != 1 || spec.bias.size(0) != C || !spec.bias.is_contiguous()))
    return false;
  const at::Tensor& m = spec.real_mask;
  if (m.defined() && (m.device() != dev || m.scalar_type() != at::kBool || m.dim() != 2 || m.size(0) != B ||
                      m.size(1) != T))
    return false;
  if (state && state->defined() &&
      (state->device() != dev || state->scalar_type() != at::kFloat || state->dim() != 3 || state->size(0) != B ||
       state->size(1) != K - 1 || state->size(2) != C || !state->is_contiguous()))
    return false;
  return float_type(spec.round_before) && float_type(spec.round_after) && float_type(spec.out_dtype);
}

at::Tensor causal_conv_cuda(const at::Tensor& x, const at::Tensor& weight, at::Tensor* state,
                            const CausalConvSpec& spec) {
  if (!causal_conv_cuda_supports(x, weight, state, spec))
    throw Error(fmt::format("causal_conv_cuda: unsupported arguments (x: {}-d {}, weight: {}-d): check "
                            "causal_conv_cuda_supports first",
                            x.defined() ? x.dim() : 0, x.defined() ? c10::toString(x.scalar_type()) : "undefined",
                            weight.defined() ? weight.dim() : 0));
  c10::cuda::CUDAGuard guard(x.device());
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), K = weight.size(1);
  at::Tensor out = at::empty({B, T, C}, x.options().dtype(spec.out_dtype));

  ConvParams p{};
  p.x = x.data_ptr();
  p.x_sb = x.stride(0);
  p.x_st = x.stride(1);
  p.w = weight.data_ptr<float>();
  p.bias = spec.bias.defined() ? spec.bias.data_ptr<float>() : nullptr;
  p.mask = spec.real_mask.defined() ? spec.real_mask.data_ptr<bool>() : nullptr;
  p.m_sb = spec.real_mask.defined() ? spec.real_mask.stride(0) : 0;
  p.m_st = spec.real_mask.defined() ? spec.real_mask.stride(1) : 0;
  if (state) {
    if (state->defined())
      p.hist = state->data_ptr<float>();  // updated in place below
    else
      *state = at::empty({B, K - 1, C}, x.options().dtype(at::kFloat));
    p.state = state->data_ptr<float>();
  }
  p.out = out.data_ptr();
  p.T = static_cast<int>(T);
  p.C = static_cast<int>(C);
  p.silu = spec.silu ? 1 : 0;
  p.round_before = round_code(spec.round_before);
  p.round_after = round_code(spec.round_after);

  const size_t xbytes = x.element_size();
  const bool vec = C % 4 == 0 && x.stride(0) % 4 == 0 && x.stride(1) % 4 == 0 && aligned(p.x, 4 * xbytes) &&
                   aligned(p.out, 4 * out.element_size()) && (!p.state || aligned(p.state, 16));
  const int V = vec ? 4 : 1;
  const int64_t nvec = (C + V - 1) / V;
  const dim3 grid(static_cast<unsigned>((nvec + kThreads - 1) / kThreads), static_cast<unsigned>((T + kTile - 1) / kTile),
                  static_cast<unsigned>(B));
  const auto stream = at::cuda::getCurrentCUDAStream().stream();

  with_type(x.scalar_type(), [&](auto tin) {
    using Tin = typename decltype(tin)::type;
    with_type(spec.out_dtype, [&](auto tout) {
      using Tout = typename decltype(tout)::type;
      auto go = [&](auto k_c) {
        constexpr int KK = decltype(k_c)::value;
        if (vec)
          causal_conv_kernel<Tin, Tout, KK, 4><<<grid, kThreads, 0, stream>>>(p);
        else
          causal_conv_kernel<Tin, Tout, KK, 1><<<grid, kThreads, 0, stream>>>(p);
      };
      if (K == 2)
        go(std::integral_constant<int, 2>{});
      else if (K == 3)
        go(std::integral_constant<int, 3>{});
      else
        go(std::integral_constant<int, 4>{});
    });
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
