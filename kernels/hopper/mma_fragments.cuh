// The mma.sync m16n8k16 (bf16) operand plumbing both recurrent kernels use (recurrent_gla.cu,
// recurrent_delta.cu): ldmatrix.x4 wrappers, the per-lane shared-memory addresses that feed them
// (lane l gives the row address of 8x8 matrix l >> 3), and bf16x2 packing. Below sm_80 the
// wrappers trap: the kernels' *_supports() checks keep them from being launched there.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/hopper/mma_sync.cuh"

namespace foxeval::mma_frag {

using bf16 = __nv_bfloat16;

// d (16x8 fp32) += a (16x16 bf16, row-major fragment) * b (16x8 bf16, column fragment b0, b1).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  hopper::mma16816<bf16>(d, a, b0, b1);
#else
  __trap();
#endif
}

// Four 8x8 bf16 matrices from shared memory (.trans: each transposed).
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  hopper::ldmatrix_x4(hopper::smem_u32(p), r[0], r[1], r[2], r[3]);
#else
  __trap();
#endif
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  hopper::ldmatrix_x4_trans(hopper::smem_u32(p), r[0], r[1], r[2], r[3]);
#else
  __trap();
#endif
}

// A operand [16 x 16] at rows m0.., columns k0.. of a row-major X[m][k] (row stride ld): ldsm_x4.
__device__ __forceinline__ const bf16* a_rowmajor(const bf16* x, int ld, int m0, int k0, int lane) {
  return x + (m0 + (lane & 15)) * ld + k0 + (lane >> 4) * 8;
}
// A operand of A = X^T, X[k][m] row-major: ldsm_x4_trans.
__device__ __forceinline__ const bf16* a_transposed(const bf16* x, int ld, int m0, int k0, int lane) {
  return x + (k0 + (lane >> 4) * 8 + (lane & 7)) * ld + m0 + ((lane >> 3) & 1) * 8;
}
// B operands of two n8 tiles (n0, n0 + 8) over k0..k0+15 from X[n][k] row-major (B = X^T):
// ldsm_x4; registers {0,1} = tile n0, {2,3} = tile n0 + 8.
__device__ __forceinline__ const bf16* b_from_nk(const bf16* x, int ld, int n0, int k0, int lane) {
  return x + (n0 + (lane >> 4) * 8 + (lane & 7)) * ld + k0 + ((lane >> 3) & 1) * 8;
}
// The same from X[k][n] row-major (B = X): ldsm_x4_trans.
__device__ __forceinline__ const bf16* b_from_kn(const bf16* x, int ld, int n0, int k0, int lane) {
  return x + (k0 + ((lane >> 3) & 1) * 8 + (lane & 7)) * ld + n0 + (lane >> 4) * 8;
}

// Two floats as a bf16x2 register (lo in the low half: the smaller column of a fragment), and back.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) { return hopper::TypeTraits<bf16>::pack(lo, hi); }
__device__ __forceinline__ float2 unpack_bf16(uint32_t u) { return hopper::TypeTraits<bf16>::unpack(u); }

}  // namespace foxeval::mma_frag
