// One block per row: an online (max, sum of exp) over the row in fp32, merged across the
// block; then the label's logit minus the log-sum-exp. Reads each logit once.
#include "kernels/fused_loss.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cmath>

namespace foxeval {
namespace {

constexpr int kThreads = 512;

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Merges (m, s) with (m2, s2): s * exp(m - m') + s2 * exp(m2 - m'), m' = max(m, m2).
__device__ inline void merge(float& m, float& s, float m2, float s2) {
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

template <typename T>
__global__ void __launch_bounds__(kThreads) token_logprobs_kernel(const T* __restrict__ logits,
                                                                  const int64_t* __restrict__ labels, float* out,
                                                                  int64_t V, int64_t ld) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * ld;
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < V; i += kThreads) {
    const float v = to_float(x[i]);
    if (v > m) {
      s = s * __expf(m - v) + 1.f;
      m = v;
    } else {
      s += __expf(v - m);
    }
  }
  for (int off = 16; off > 0; off >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
  __shared__ float sm[kThreads / 32], ss[kThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < kThreads / 32 ? sm[lane] : -INFINITY;
    s = lane < kThreads / 32 ? ss[lane] : 0.f;
    for (int off = 16; off > 0; off >>= 1)
      merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    if (lane == 0) out[row] = to_float(x[labels[row]]) - (m + logf(s));
  }
}

}  // namespace

at::Tensor fused_token_logprobs(const at::Tensor& logits, const at::Tensor& labels) {
  if (!logits.is_cuda() || logits.dim() != 2 || labels.dim() != 1 || labels.size(0) != logits.size(0) ||
      labels.scalar_type() != at::kLong || !labels.is_cuda() || logits.stride(1) != 1 ||
      logits.stride(0) < logits.size(1) || labels.stride(0) != 1)
    return at::Tensor();
  if (logits.scalar_type() != at::kBFloat16 && logits.scalar_type() != at::kFloat) return at::Tensor();
  c10::cuda::CUDAGuard guard(logits.device());
  const int64_t N = logits.size(0), V = logits.size(1), ld = logits.stride(0);
  at::Tensor out = at::empty({N}, logits.options().dtype(at::kFloat));
  if (N == 0) return out;
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  if (logits.scalar_type() == at::kBFloat16) {
    token_logprobs_kernel<__nv_bfloat16><<<N, kThreads, 0, stream>>>(
        reinterpret_cast<const __nv_bfloat16*>(logits.data_ptr()), labels.data_ptr<int64_t>(), out.data_ptr<float>(), V, ld);
  } else {
    token_logprobs_kernel<float><<<N, kThreads, 0, stream>>>(logits.data_ptr<float>(), labels.data_ptr<int64_t>(),
                                                             out.data_ptr<float>(), V, ld);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
