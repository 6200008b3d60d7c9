// One block per row: an online (max, sum of exp) over the row in fp32, merged across the
// block; then the label's logit minus the log-sum-exp. Reads each logit once, 8 at a time (one
// 16-byte load of bf16): a thread takes chunks of 8 logits, kUnroll chunks in flight, folds each
// chunk's maximum into its running one and then adds the chunk's 8 exponentials. (With one 2-byte
// load and one rescale test a logit, the 64k loss read at ~1.5 TB/s on an H100.) Rows whose pitch
// or base is not 16-byte aligned, and the last chunk of a row, take scalar loads with the same
// arithmetic, so the bits do not depend on the row pitch.
#include "kernels/fused_loss.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cmath>

#include "kernels/cuda_types.cuh"

namespace foxeval {
namespace {

constexpr int kLossThreads = 256;
constexpr int kUnroll = 4;
constexpr int kLossChunk = 8;

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

using cuda_types::merge_max_sum;

// Chunk c of a row (elements 8c .. 8c+7; those at or past V read as -inf).
template <bool VEC, typename T>
__device__ __forceinline__ void load_chunk(const T* x, int64_t c, int64_t V, float* v) {
  const int64_t off = c * kLossChunk;
  if (VEC && off + kLossChunk <= V) {
    cuda_types::load8(x + off, v);
  } else {
#pragma unroll
    for (int e = 0; e < kLossChunk; ++e) v[e] = off + e < V ? to_float(x[off + e]) : -INFINITY;
  }
}

// Folds one chunk (at least one element finite or the row's own -inf) into (m, s).
__device__ __forceinline__ void fold_chunk(const float* v, float& m, float& s) {
  float cm = fmaxf(fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])), fmaxf(fmaxf(v[4], v[5]), fmaxf(v[6], v[7])));
  if (cm > m) {
    s *= __expf(m - cm);  // 0 while m is still -inf
    m = cm;
  }
  float add = 0.f;
#pragma unroll
  for (int e = 0; e < kLossChunk; ++e) add += __expf(v[e] - m);
  s += add;
}

template <bool VEC, typename T>
__global__ void __launch_bounds__(kLossThreads) token_logprobs_kernel(const T* __restrict__ logits,
                                                                  const int64_t* __restrict__ labels, float* out,
                                                                  int64_t V, int64_t ld) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * ld;
  const int64_t chunks = (V + kLossChunk - 1) / kLossChunk;
  float m = -INFINITY, s = 0.f;
  for (int64_t c0 = threadIdx.x; c0 < chunks; c0 += kLossThreads * kUnroll) {
    float v[kUnroll][kLossChunk];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (c0 + u * kLossThreads < chunks) load_chunk<VEC>(x, c0 + u * kLossThreads, V, v[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (c0 + u * kLossThreads < chunks) fold_chunk(v[u], m, s);
  }
  for (int off = 16; off > 0; off >>= 1) merge_max_sum(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
  __shared__ float sm[kLossThreads / 32], ss[kLossThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < kLossThreads / 32 ? sm[lane] : -INFINITY;
    s = lane < kLossThreads / 32 ? ss[lane] : 0.f;
    for (int off = 16; off > 0; off >>= 1)
      merge_max_sum(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    if (lane == 0) out[row] = to_float(x[labels[row]]) - (m + logf(s));
  }
}

template <typename T>
void launch(const at::Tensor& logits, const at::Tensor& labels, at::Tensor& out, cudaStream_t stream) {
  const int64_t N = logits.size(0), V = logits.size(1), ld = logits.stride(0);
  const T* x = reinterpret_cast<const T*>(logits.data_ptr());
  // 16-byte loads need every row's start 16-byte aligned.
  const bool vec = cuda_types::aligned(x, 16) && (ld * static_cast<int64_t>(sizeof(T))) % 16 == 0;
  auto kernel = vec ? token_logprobs_kernel<true, T> : token_logprobs_kernel<false, T>;
  kernel<<<N, kLossThreads, 0, stream>>>(x, labels.data_ptr<int64_t>(), out.data_ptr<float>(), V, ld);
}

}  // namespace

at::Tensor fused_token_logprobs(const at::Tensor& logits, const at::Tensor& labels) {
  if (!logits.is_cuda() || logits.dim() != 2 || labels.dim() != 1 || labels.size(0) != logits.size(0) ||
      labels.scalar_type() != at::kLong || !labels.is_cuda() || logits.stride(1) != 1 ||
      logits.stride(0) < logits.size(1) || labels.stride(0) != 1)
    return at::Tensor();
  if (logits.scalar_type() != at::kBFloat16 && logits.scalar_type() != at::kFloat) return at::Tensor();
  c10::cuda::CUDAGuard guard(logits.device());
  const int64_t N = logits.size(0);
  at::Tensor out = at::empty({N}, logits.options().dtype(at::kFloat));
  if (N == 0) return out;
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  if (logits.scalar_type() == at::kBFloat16)
    launch<__nv_bfloat16>(logits, labels, out, stream);
  else
    launch<float>(logits, labels, out, stream);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
