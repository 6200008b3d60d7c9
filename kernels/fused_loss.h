// Fused token log-likelihood from logits on the GPU: one pass over each row of logits instead
// of upcasting the [positions, vocab] block to fp32 and reducing it several times.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// logits [N, V] (bf16 or fp32, CUDA; rows contiguous, any row pitch >= V, e.g. a narrowed view of
// logits padded to an aligned vocabulary), labels [N] int64 in [0, V):
// log_softmax(logits)[n, labels[n]] in fp32, computed as logit - (max + log(sum(exp(logit - max))))
// in fp32 (the official fused cross-entropy's numerics). Undefined when unsupported (CPU, other
// dtypes): the caller then uses torch ops.
at::Tensor fused_token_logprobs(const at::Tensor& logits, const at::Tensor& labels);

}  // namespace foxeval
