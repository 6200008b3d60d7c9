// Programmatic dependent launch (Hopper, PTX griddepcontrol): lets a decode step's matmul start
// while the small kernel before it still runs, so the matmul's weight loads (which depend on no
// earlier kernel) overlap that kernel and the launch gap instead of following them.
//
// - A kernel launched with the programmatic-serialization attribute (kernels/gemv.cu) may begin
//   before the previous kernel in the stream has finished; pdl_wait() blocks until that kernel has
//   completed and its writes are visible. Nothing written by earlier kernels may be read before it,
//   and nothing may be written before it (the previous kernel may still read the memory).
// - pdl_trigger() in the previous kernel says its dependents may launch now rather than when its
//   blocks exit; it changes nothing about what pdl_wait() waits for.
// Both are no-ops for kernels launched the ordinary way. CUDA graphs keep the edge when captured.
//
// The decode step's kernels (GEMV, norms, SwiGLU, the fused decode prep, decode attention and its
// combine) are launched this way; each waits before touching memory, so a kernel's completion
// still implies its predecessors' and stream order holds for everything after it. The GEMV alone
// starts work before its wait (weight loads) and does not trigger early, which bounds how many
// kernels can sit waiting at once. FOXEVAL_PDL=0 launches them the ordinary way (A/B).
#pragma once
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

#include "kernels/env_switch.h"

namespace foxeval {

inline bool pdl_enabled() {
  static const SwitchSlot on("FOXEVAL_PDL");
  return on.on();
}

// kernel<<<grid, block, smem, stream>>>(args...), as a programmatic dependent of the kernel before
// it in the stream; a failed launch throws (no separate launch check needed).
template <typename... KernelArgs, typename... Args>
void launch_dependent(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                      Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = pdl_enabled() ? 1 : 0;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  C10_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace foxeval
