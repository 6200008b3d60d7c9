// The MLP's gate_up projection with its gated linear unit in the epilogue, for prefill-sized
// inputs on Hopper: [M, K] x [2I, K]^T -> act(gate) * up, [M, I].
//
// cuBLAS writes the [M, 2I] projection and fused_swiglu (kernels/fused_glue.h) reads it back:
// at 64k tokens and the 760M models that is 0.94 GB a layer written and read again, ~0.5 ms
// (kernels/NOTES.md). Here the product never leaves the registers: a persistent warp-specialized
// wgmma kernel (one producer warpgroup streaming 128 x 64 tiles of x and two 128 x 64 tiles of
// the weight, gate rows n..n+127 and the up rows I+n..I+n+127, through TMA; two consumer
// warpgroups of 64 rows each) holds gate and up of the same 128 columns in one accumulator, so
// each thread finds its gate and up values side by side.
//
// Arithmetic as fused_swiglu(linear(x, w)): each projection is rounded to bf16 first, then
// act(gate) * up in fp32 (torch's silu / sigmoid forms), one rounding to bf16. The projection's
// own fp32 sums run in the tensor cores' order, not cuBLAS's, so a value can differ from the
// two-kernel path by one bf16 rounding of the projection (tests/test_glu_gemm_cuda.cpp bounds
// both against fp64).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// Rows below which glu_gemm declines (decode batches: cuBLAS or the GEMV take those).
constexpr int64_t kGluGemmMinRows = 256;

// x [..., K] bf16, weight [2I, K] bf16 contiguous ([gate; up], no bias) -> [..., I] bf16 =
// act(x W_gate^T) * (x W_up^T), act SiLU (`silu`) or sigmoid. Undefined where it does not take the
// arguments (not CUDA or not sm_90, other dtypes, fewer than kGluGemmMinRows rows, K not a
// multiple of 64, I not a multiple of 128, unaligned pointers, FOXEVAL_GLU_GEMM=0 in the
// environment): the caller then runs linear + fused_swiglu.
at::Tensor glu_gemm(const at::Tensor& x, const at::Tensor& weight, bool silu);

// Whether glu_gemm takes these arguments (the conditions above), without launching anything:
// callers that time the stage ask first.
bool glu_gemm_supports(const at::Tensor& x, const at::Tensor& weight);

}  // namespace foxeval
