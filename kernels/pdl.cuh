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
#pragma once

namespace foxeval {

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
