// The language-model head with the loss in its epilogue, for prefill-sized inputs on Hopper:
// hidden [M, K] x head [V', K]^T -> log_softmax(logits)[m, label[m]], [M] fp32, where the logits
// never reach memory.
//
// The two-kernel path writes bf16 logits (at 64k tokens of a 50k vocabulary 6.6 GB a document,
// in 13 chunks) and fused_token_logprobs (kernels/fused_loss.h) reads them back. Here a
// persistent warp-specialized wgmma kernel (the gate_up GEMM's shape, kernels/glu_gemm.cu)
// computes 128 x 256 logit tiles; each consumer thread rounds its logits to bf16 (as the two-kernel
// path stores them) and, beside the next tile's products, reduces its rows to the tile's maximum and
// sum of exp(logit - maximum), written per (row, column tile); the label's logit is kept where it
// falls. A second small kernel merges each row's partials in a fixed order: the result is
// deterministic. The fp32 sums run in another order than fused_token_logprobs's, so the two agree
// to fp32 rounding, not to the bit (tests/test_lm_head_loss_cuda.cpp bounds both against fp64).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// Rows below which lm_head_token_logprobs declines (the chunked two-kernel path takes those).
constexpr int64_t kLmHeadLossMinRows = 256;

// hidden [..., K] (fp32 or bf16; cast to bf16, as linear does), head [V', K] bf16 contiguous (rows
// past `vocab` are padding and ignored), labels [...] int64 in [0, vocab) -> [...] fp32
// log-probabilities of the labels. Undefined where it does not take the arguments (not CUDA or not
// sm_90, K not a multiple of 64, fewer than kLmHeadLossMinRows rows, vocab > V', unaligned
// pointers, FOXEVAL_LM_HEAD_LOSS=0 in the environment): the caller then runs the two kernels. A
// label outside [0, vocab) gives NaN.
at::Tensor lm_head_token_logprobs(const at::Tensor& hidden, const at::Tensor& head, int64_t vocab,
                                  const at::Tensor& labels);

// Whether lm_head_token_logprobs takes these arguments, without launching anything.
bool lm_head_loss_supports(const at::Tensor& hidden, const at::Tensor& head, int64_t vocab);

}  // namespace foxeval
