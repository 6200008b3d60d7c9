// The cumulative log forget gate of a FoX prefill, from the forget gate's logits, in two small
// CUDA kernels (models/fox/fox_model.cpp, `attention`).
//
//   c[b, h, t] = sum_{s <= t} log_sigmoid(x[b, s, h])       (fp32 throughout)
//
// The ATen path takes four kernels (log_sigmoid, a transpose copy, cumsum and its helpers;
// ~0.25 ms a layer at 64k tokens, the cumsum one block per (b, h) row). Here: pass 1, one block per
// 256 tokens of a row, computes log_sigmoid as torch's CUDA kernel does (expf, log1pf), scans
// each head's 256 values (8 a lane in order, then a warp scan) and writes the chunk's total;
// pass 2 adds each chunk the sum of the totals before it, in chunk order. The order of the
// additions is fixed, so the result is deterministic; it differs from at::cumsum's order only
// in fp32 rounding (tests/test_fused_glue.cpp measures both against fp64).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// logits [B, T, H] (fp32/bf16; evenly spaced rows: a column slice of the fused projection
// qualifies) -> c [B, H, T] fp32 contiguous. Undefined when unsupported (CPU tensors, other
// dtypes, H > 64, FOXEVAL_FUSED_GLUE=0): the caller runs the ATen path.
at::Tensor fused_log_fgate_cumsum(const at::Tensor& logits);

}  // namespace foxeval
