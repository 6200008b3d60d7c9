// Cumulative log forget gate (see kernels/fgate_scan.h).
#include "kernels/fgate_scan.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_types.cuh"
#include "kernels/env_switch.h"
#include "kernels/glue_layout.h"

namespace foxeval {
namespace {

using namespace cuda_types;

constexpr int kChunk = 256;  // tokens per block (= threads; 8 per lane of a warp's scan)
constexpr int kStride = kChunk + 1;  // shared-memory row of a head (padded: the token-major writes hit distinct banks)
constexpr int kMaxHeads = 64;

// torch's CUDA log_sigmoid: min(x, 0) - log1p(exp(-|x|)).
__device__ __forceinline__ float log_sigmoid_torch(float x) { return fminf(0.f, x) - log1pf(expf(-fabsf(x))); }

// Pass 1: block (chunk, b). c gets each chunk's own inclusive scan; totals[b, chunk, h] its sum.
template <typename T>
__global__ void __launch_bounds__(kChunk) fgate_chunk_scan_kernel(const T* __restrict__ x, int64_t x_rs, int H, int64_t Tn,
                                                                  int nchunks, float* __restrict__ c, float* __restrict__ totals) {
  extern __shared__ float lf[];  // [H][kStride]
  const int chunk = blockIdx.x, b = blockIdx.y;
  const int64_t t0 = static_cast<int64_t>(chunk) * kChunk;
  // Consecutive threads read consecutive heads of a token (one row's slice at a time).
  for (int j = threadIdx.x; j < kChunk * H; j += kChunk) {
    const int i = j / H, h = j - i * H;
    const int64_t t = t0 + i;
    lf[h * kStride + i] = t < Tn ? log_sigmoid_torch(to_f(x[(b * Tn + t) * x_rs + h])) : 0.f;
  }
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int h = warp; h < H; h += kChunk / 32) {
    const float* r = lf + h * kStride + lane * 8;
    float loc[8], run = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      run = __fadd_rn(run, r[e]);
      loc[e] = run;
    }
    float incl = run;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl = __fadd_rn(incl, y);
    }
    float excl = __shfl_up_sync(0xffffffffu, incl, 1);
    if (lane == 0) excl = 0.f;
    float* out = c + (static_cast<int64_t>(b) * H + h) * Tn + t0 + lane * 8;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (t0 + lane * 8 + e < Tn) out[e] = __fadd_rn(excl, loc[e]);
    if (lane == 31) totals[(static_cast<int64_t>(b) * nchunks + chunk) * H + h] = incl;
  }
}

// Pass 2: block (chunk, b) adds the totals of chunks 0 .. chunk-1, summed in order.
__global__ void __launch_bounds__(kChunk) fgate_add_offsets_kernel(float* __restrict__ c, const float* __restrict__ totals,
                                                                   int H, int64_t Tn, int nchunks) {
  __shared__ float off[kMaxHeads];
  const int chunk = blockIdx.x + 1, b = blockIdx.y;  // chunk 0 has nothing before it
  const float* tot = totals + static_cast<int64_t>(b) * nchunks * H;
  for (int h = threadIdx.x; h < H; h += kChunk) {
    float s = 0.f;
    for (int k = 0; k < chunk; ++k) s = __fadd_rn(s, tot[k * H + h]);
    off[h] = s;
  }
  __syncthreads();
  const int64_t t0 = static_cast<int64_t>(chunk) * kChunk;
  for (int j = threadIdx.x; j < kChunk * H; j += kChunk) {
    const int h = j / kChunk, i = j - h * kChunk;
    const int64_t t = t0 + i;
    if (t < Tn) {
      float* p = c + (static_cast<int64_t>(b) * H + h) * Tn + t;
      *p = __fadd_rn(*p, off[h]);
    }
  }
}

}  // namespace

at::Tensor fused_log_fgate_cumsum(const at::Tensor& logits) {
  if (!fused_glue_on() || !logits.defined() || !logits.is_cuda() || logits.dim() != 3) return {};
  const auto dt = logits.scalar_type();
  if (dt != at::kFloat && dt != at::kBFloat16) return {};
  const int64_t B = logits.size(0), Tn = logits.size(1), H = logits.size(2);
  const int64_t rs = uniform_row_stride(logits);
  if (B < 1 || Tn < 1 || H < 1 || H > kMaxHeads || rs < 0 || B > 65535) return {};
  const int64_t nchunks = (Tn + kChunk - 1) / kChunk;
  if (nchunks > (int64_t(1) << 30)) return {};
  c10::cuda::CUDAGuard guard(logits.device());
  const auto fopts = logits.options().dtype(at::kFloat);
  at::Tensor c = at::empty({B, H, Tn}, fopts);
  at::Tensor totals = at::empty({B, nchunks, H}, fopts);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  const int h = static_cast<int>(H), nc = static_cast<int>(nchunks);
  const size_t smem = static_cast<size_t>(H) * kStride * sizeof(float);  // < 65 KB
  auto pass1 = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto kernel = fgate_chunk_scan_kernel<T>;
    if (smem > 48 * 1024)
      C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<dim3(nc, static_cast<unsigned>(B)), kChunk, smem, stream>>>(static_cast<const T*>(logits.data_ptr()), rs, h, Tn,
                                                                          nc, c.data_ptr<float>(), totals.data_ptr<float>());
  };
  if (dt == at::kFloat)
    pass1(Tag<float>{});
  else
    pass1(Tag<bf16>{});
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (nc > 1) {
    fgate_add_offsets_kernel<<<dim3(nc - 1, static_cast<unsigned>(B)), kChunk, 0, stream>>>(c.data_ptr<float>(),
                                                                                          totals.data_ptr<float>(), h, Tn, nc);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return c;
}

}  // namespace foxeval
