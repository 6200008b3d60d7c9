// Small-batch matmul for decode steps (see kernels/gemv.h).
//
// A block of kWarps warps; each warp owns kRows consecutive output rows n and, for each, walks
// the K/8 16-byte chunks of W[n] with its 32 lanes, U (2) chunks per lane per iteration
// (all loads of an iteration issued before the arithmetic: kRows * U * 16 bytes in flight
// per lane). The chunk of every row of x is loaded once per chunk index and reused across the
// warp's rows. Weight loads bypass L1 (read once); x stays in L1/L2.
//
// Launched as a programmatic dependent (kernels/pdl.cuh): the first iteration's weight loads are
// issued before waiting for the kernel that wrote x (a norm or SwiGLU, which trigger early), so at
// batch 1 the weight stream starts during that kernel instead of after it and the launch gap.
#include "kernels/gemv.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cstdlib>
#include <string>
#include <type_traits>

#include "kernels/cuda_types.cuh"
#include "data/switches.h"
#include "kernels/pdl.cuh"

namespace foxeval {
namespace {

using cuda_types::bf16;

constexpr int kWarps = 4;
constexpr int kRows = 2;
// Chunks per lane per iteration: 2. Measured at batch 1 x 1k on the H100 (`bench generate`, same
// call): 834.6 tokens/s with 2, 816.0 with 4; 8 was slower still (757 vs 807 in another call).
// Fewer registers, more warps resident: the rows of a warp and the warps of an SM keep the loads
// in flight. FOXEVAL_GEMV_UNROLL=4 runs the earlier choice (A/B).
bool gemv_unroll_4() {
  static const SwitchSlot unroll("FOXEVAL_GEMV_UNROLL");
  const char* v = unroll.value();
  return v && std::string(v) == "4";
}

__device__ __forceinline__ uint4 load_stream(const bf16* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

using cuda_types::unpack_bf16x8;

// Gated linear unit in the epilogue (GLU != kPlain): the weight is [gate; up] ([2N, K]), the
// warp's two rows are gate row i and up row N + i, and it stores act(gate) * up for output i, as
// fused_swiglu after a plain GEMV (kernels/fused_glue.cu): both rounded to bf16 first, the
// product in fp32, one rounding; bit for bit, one kernel instead of two.
enum Glu { kPlain = 0, kSilu = 1, kSigmoid = 2 };

// S: rows of x (1..8), as a template bound with the real count m <= S. N: output columns.
template <int S, int GLU, int U>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const bf16* __restrict__ w, const bf16* __restrict__ x,
                                                          const bf16* __restrict__ bias, bf16* __restrict__ y, int m,
                                                          int N, int K, int64_t ldx) {
  static_assert(GLU == kPlain || kRows == 2, "a GLU warp owns one gate row and one up row");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int n0 = GLU == kPlain ? (blockIdx.x * kWarps + warp) * kRows : blockIdx.x * kWarps + warp;
  if (n0 >= N) return;
  const int chunks = K / 8;
  float acc[kRows][S];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int s = 0; s < S; ++s) acc[r][s] = 0.f;
  // Rows past N read row n0 again (their sums are not stored): no bounds checks in the loop.
  const bf16* wr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    wr[r] = w + static_cast<int64_t>(GLU != kPlain ? n0 + r * N : (n0 + r < N ? n0 + r : n0)) * K;

  uint4 wv[U][kRows];
  auto load_weights = [&](int c0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * 32;
      if (c < chunks) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) wv[u][r] = load_stream(wr[r] + c * 8);
      }
    }
  };
  // The weights depend on no earlier kernel: the first round goes out before the wait for x.
  load_weights(lane);
  pdl_wait();
  for (int c0 = lane; c0 < chunks; c0 += 32 * U) {
    if (c0 != lane) load_weights(c0);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * 32;
      if (c >= chunks) break;
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (s >= m) break;
        float xf[8];
        unpack_bf16x8(*reinterpret_cast<const uint4*>(x + s * ldx + c * 8), xf);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float wf[8];
          unpack_bf16x8(wv[u][r], wf);
          float a = acc[r][s];
#pragma unroll
          for (int e = 0; e < 8; ++e) a = fmaf(wf[e], xf[e], a);
          acc[r][s] = a;
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], o);
  if (lane == 0 && GLU != kPlain) {
    const float b0 = bias ? __bfloat162float(bias[n0]) : 0.f, b1 = bias ? __bfloat162float(bias[n0 + N]) : 0.f;
#pragma unroll
    for (int s = 0; s < S; ++s)
      if (s < m) {
        const float g = __bfloat162float(__float2bfloat16_rn(acc[0][s] + b0));
        const float u = __bfloat162float(__float2bfloat16_rn(acc[1][s] + b1));
        const float a = GLU == kSilu ? cuda_types::silu_torch(g) : cuda_types::sigmoid_torch(g);
        y[static_cast<int64_t>(s) * N + n0] = __float2bfloat16_rn(__fmul_rn(a, u));
      }
  } else if (lane == 0) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int n = n0 + r;
      if (n >= N) break;
      const float b = bias ? __bfloat162float(bias[n]) : 0.f;
#pragma unroll
      for (int s = 0; s < S; ++s)
        if (s < m) y[static_cast<int64_t>(s) * N + n] = __float2bfloat16_rn(acc[r][s] + b);
    }
  }
}

bool gemv_enabled() {
  static const SwitchSlot on("FOXEVAL_GEMV");
  return on.on();
}


// y = x W^T (+ bias), or with glu != kPlain the gated product of its two halves.
at::Tensor launch_gemv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Glu glu) {
  if (!gemv_enabled() || !x.is_cuda() || !weight.is_cuda() || x.device() != weight.device()) return at::Tensor();
  if (x.scalar_type() != at::kBFloat16 || weight.scalar_type() != at::kBFloat16 || weight.dim() != 2 ||
      !weight.is_contiguous() || x.dim() < 1)
    return at::Tensor();
  const int64_t W = weight.size(0), K = weight.size(1);
  if (x.size(-1) != K || K % 8 != 0 || K < 8 || W < 1 || W >= (int64_t(1) << 31) || K >= (int64_t(1) << 31))
    return at::Tensor();
  if (glu != kPlain && W % 2 != 0) return at::Tensor();
  const int64_t N = glu != kPlain ? W / 2 : W;  // output columns
  const int64_t m = K == 0 ? 0 : x.numel() / K;
  if (m < 1 || m > kGemvMaxRows) return at::Tensor();
  // Rows of x: the last dim contiguous, rows evenly spaced (a [m, K] view).
  at::Tensor x2 = x.reshape({m, K});
  if (x2.stride(1) != 1 || (m > 1 && x2.stride(0) % 8 != 0)) return at::Tensor();
  if (bias.defined() && (!bias.is_cuda() || bias.device() != x.device() || bias.scalar_type() != at::kBFloat16 ||
                         bias.numel() != W || !bias.is_contiguous()))
    return at::Tensor();
  if (!cuda_types::aligned(x2.data_ptr(), 16) || !cuda_types::aligned(weight.data_ptr(), 16)) return at::Tensor();
  c10::cuda::CUDAGuard guard(x.device());
  auto out_shape = x.sizes().vec();
  out_shape.back() = N;
  at::Tensor y = at::empty(out_shape, x.options());
  const int64_t per_block = glu != kPlain ? kWarps : kWarps * kRows;  // output columns a block makes
  const unsigned blocks = static_cast<unsigned>((N + per_block - 1) / per_block);
  auto stream = at::cuda::getCurrentCUDAStream();
  const auto* wp = reinterpret_cast<const bf16*>(weight.data_ptr());
  const auto* xp = reinterpret_cast<const bf16*>(x2.data_ptr());
  const auto* bp = bias.defined() ? reinterpret_cast<const bf16*>(bias.data_ptr()) : nullptr;
  auto* yp = reinterpret_cast<bf16*>(y.data_ptr());
  const int mi = static_cast<int>(m), Ni = static_cast<int>(N), Ki = static_cast<int>(K);
  const int64_t ldx = m > 1 ? x2.stride(0) : K;
  const dim3 grid(blocks), block(kWarps * 32);
  auto launch = [&](auto kernel) { launch_dependent(kernel, grid, block, 0, stream.stream(), wp, xp, bp, yp, mi, Ni, Ki, ldx); };
  auto rows = [&](auto glu_c, auto u_c) {
    constexpr int G = decltype(glu_c)::value, U = decltype(u_c)::value;
    if (m == 1)
      launch(gemv_kernel<1, G, U>);
    else if (m == 2)
      launch(gemv_kernel<2, G, U>);
    else if (m <= 4)
      launch(gemv_kernel<4, G, U>);
    else
      launch(gemv_kernel<8, G, U>);
  };
  auto unrolled = [&](auto glu_c) {
    if (gemv_unroll_4())
      rows(glu_c, std::integral_constant<int, 4>{});
    else
      rows(glu_c, std::integral_constant<int, 2>{});
  };
  if (glu == kSilu)
    unrolled(std::integral_constant<int, kSilu>{});
  else if (glu == kSigmoid)
    unrolled(std::integral_constant<int, kSigmoid>{});
  else
    unrolled(std::integral_constant<int, kPlain>{});
  return y;
}

}  // namespace

at::Tensor small_gemv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return launch_gemv(x, weight, bias, kPlain);
}

at::Tensor small_gemv_glu(const at::Tensor& x, const at::Tensor& weight, bool silu, const at::Tensor& bias) {
  return launch_gemv(x, weight, bias, silu ? kSilu : kSigmoid);
}

}  // namespace foxeval
