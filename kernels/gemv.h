// y = x W^T (+ bias) for a few rows of x: the matmuls of a decode step.
//
// At decode time x has one row per decoding slot, so each matmul reads its whole weight to do
// almost no arithmetic: its time is the weight's bytes over the memory bandwidth, plus a launch.
// This kernel streams each weight row once with 16-byte loads, several rows and chunks in flight
// per warp, and keeps the few rows of x in cache. `foxeval bench generate` on the H100 found it
// faster than cuBLAS for one row and slower from four rows up, so foxeval::linear takes it for
// one row only (models/layers/layers.cpp).
//
// Arithmetic: fp32 accumulation, each lane summing its 8-element chunks in order and the warp
// adding the lanes' sums by a shuffle tree, bias added in fp32, one rounding to the output dtype.
// A row's result depends on that row of x and W alone, not on how many rows x has.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// The largest number of rows of x the kernel takes.
constexpr int64_t kGemvMaxRows = 8;

// x [..., K] bf16 (rows contiguous), weight [N, K] bf16 contiguous, bias [N] bf16 or undefined:
// returns y [..., N] bf16, or an undefined tensor where the kernel does not take the arguments
// (CPU, other dtypes, more than kGemvMaxRows rows, K not a multiple of 8, unaligned pointers,
// FOXEVAL_GEMV=0 in the environment): the caller then runs at::linear.
at::Tensor small_gemv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = at::Tensor());

// The MLP's gate_up projection and its gated linear unit in one kernel: weight [2I, K] = [gate; up]
// (bias [2I] or undefined) -> [..., I] bf16 = act(x W_gate^T) * (x W_up^T) with act SiLU (`silu`)
// or sigmoid, each projection rounded to bf16 first and the product in fp32: bit for bit
// fused_swiglu(small_gemv(x, weight, bias)) (kernels/fused_glue.h), one launch fewer a layer.
// Undefined where small_gemv would not take the arguments (or 2I is odd).
at::Tensor small_gemv_glu(const at::Tensor& x, const at::Tensor& weight, bool silu, const at::Tensor& bias = at::Tensor());

}  // namespace foxeval
