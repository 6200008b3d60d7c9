// The greedy pick of a decode step (see kernels/greedy_pick.h).
#include "kernels/greedy_pick.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <climits>
#include <initializer_list>

#include "kernels/cuda_types.cuh"
#include "data/switches.h"
#include "kernels/pdl.cuh"

namespace foxeval {
namespace {

using cuda_types::to_f;

constexpr int kPickThreads = 1024;

// Whether (v, i) comes before (bv, bi) in torch.argmax's order: NaN first, then the larger
// value, then the smaller index.
__device__ __forceinline__ bool before(float v, int i, float bv, int bi) {
  const bool vn = v != v, bn = bv != bv;
  if (vn || bn) return vn && (!bn || i < bi);
  return v > bv || (v == bv && i < bi);
}

template <typename T>
__global__ void __launch_bounds__(kPickThreads) greedy_pick_kernel(const T* __restrict__ logits, int V, int64_t ld,
                                                              int64_t* __restrict__ ids, int64_t* __restrict__ tokens,
                                                              int64_t ld_tokens, const int64_t* __restrict__ column) {
  __shared__ float s_v[kPickThreads / 32];
  __shared__ int s_i[kPickThreads / 32];
  pdl_wait();  // a programmatic dependent of the LM head that wrote the logits
  const int s = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T* row = logits + s * ld;
  float bv = -INFINITY;
  int bi = INT_MAX;
  for (int i = threadIdx.x; i < V; i += kPickThreads) {
    const float v = to_f(row[i]);
    if (before(v, i, bv, bi)) bv = v, bi = i;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, bv, o);
    const int i = __shfl_xor_sync(0xffffffffu, bi, o);
    if (before(v, i, bv, bi)) bv = v, bi = i;
  }
  if (lane == 0) s_v[warp] = bv, s_i[warp] = bi;
  __syncthreads();
  if (warp == 0) {
    bv = lane < kPickThreads / 32 ? s_v[lane] : -INFINITY;
    bi = lane < kPickThreads / 32 ? s_i[lane] : INT_MAX;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float v = __shfl_xor_sync(0xffffffffu, bv, o);
      const int i = __shfl_xor_sync(0xffffffffu, bi, o);
      if (before(v, i, bv, bi)) bv = v, bi = i;
    }
    if (lane == 0) {
      const int64_t pick = bi == INT_MAX ? 0 : bi;  // V >= 1: only reached for an empty row
      ids[s] = pick;
      tokens[s * ld_tokens + column[0]] = pick;
    }
  }
}

}  // namespace

bool greedy_pick_cuda(const at::Tensor& logits, at::Tensor& ids, at::Tensor& tokens, const at::Tensor& column) {
  static const SwitchSlot on("FOXEVAL_GREEDY_PICK");
  if (!on.on() || !logits.is_cuda() || logits.dim() != 2 || logits.stride(1) != 1 || !cuda_types::float_type(logits.scalar_type()))
    return false;
  const int64_t S = logits.size(0), V = logits.size(1);
  if (S < 1 || S > 65535 || V < 1 || V >= INT_MAX) return false;
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ids, &tokens, &column})
    if (!t->defined() || t->device() != logits.device() || t->scalar_type() != at::kLong) return false;
  if (ids.dim() != 1 || ids.size(0) != S || !ids.is_contiguous() || tokens.dim() != 2 || tokens.size(0) != S ||
      !tokens.is_contiguous() || column.numel() != 1)
    return false;
  c10::cuda::CUDAGuard guard(logits.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cuda_types::with_type(logits.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_dependent(greedy_pick_kernel<T>, dim3(static_cast<unsigned>(S)), dim3(kPickThreads), 0, stream,
                     reinterpret_cast<const T*>(logits.data_ptr()), static_cast<int>(V), logits.stride(0),
                     ids.data_ptr<int64_t>(), tokens.data_ptr<int64_t>(), tokens.stride(0), column.data_ptr<int64_t>());
  });
  return true;
}

}  // namespace foxeval
