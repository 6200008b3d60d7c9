// Fused CUDA kernels for the delta rule (DeltaNet), the kKernel branch of recurrent::delta_rule:
//   S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T,   o_t = scale * S_t^T q_t
// q, k [B, H, T, K]; v [B, H, T, V]; beta [B, H, T]; fp32 (q, k, v may be bf16 instead, all
// three, for the chunked form: the values the kernels round them to anyway, read at half the
// traffic) with any strides whose last dim (of q, k, v) is contiguous. state [B, H, K, V] fp32:
// the initial state (zeros when undefined), replaced by the final one. Returns fp32
// [B, H, T, V] (contiguous).
//
// Precision: that of fla's chunk_delta_rule (commit 1c5937e), which reads bf16: q, k, v are
// rounded to bf16 (q after the scale), products run on tensor cores from bf16 operands with fp32
// accumulation, the WY inverse is solved in fp32 and rounded to bf16 before use, w, u, v_new and
// the state operand are rounded to bf16 at the points the Triton kernels round them; the state
// itself is carried in fp32. The single-step kernel is fp32 throughout (fla's fused recurrent
// decode is fp32 inside).
//
// Dispatch rule (documented, not a silent fallback): delta_rule_cuda_supports() is false for
// tensors not on a CUDA device of compute capability >= 8.0, inputs other than fp32 (or bf16 q,
// k, v with fp32 beta: the step kernel takes fp32 only), K not in {64, 128},
// V not a multiple of 32 in [32, 256], or a last dim that is not contiguous; recurrent::delta_rule
// then runs its exact fp32 ATen form (e.g. for the tiny test fixtures, K = V = 16 or 32).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {
namespace kernels {

// True when the kernels below accept these arguments (see the dispatch rule above).
bool delta_rule_cuda_supports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta);

// Chunked form (chunks of 64 tokens, WY representation), any T >= 1. `state` is rebound to a new
// [B, H, K, V] fp32 tensor holding the final state (the input state is only read). Three launches
// (chunk preparation, the sequential state pass, the chunk-parallel output) on the current stream;
// its scratch (the per-chunk bf16 blocks, states and v_new: (3K + 2V + 64 + K V / 64) * 2 bytes a
// token and head) comes from the caching allocator; no host synchronisation.
at::Tensor delta_rule_chunked_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& beta, double scale, at::Tensor& state);

// One token (T == 1, decode): updates `state` in place (allocated as zeros when undefined) and
// returns [B, H, 1, V]. No host synchronisation and no data-dependent allocation, so it can be
// captured in a CUDA graph once `state` exists.
at::Tensor delta_rule_step_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                                double scale, at::Tensor& state);

namespace testing {

// The previous two-launch algorithm, for tests: the same preparation, then a scan that computes the
// output inside the recurrence (O^T = S^T q^T + v_new^T Aqk^T per chunk). Same contract as
// delta_rule_chunked_cuda, whose output kernel runs the same mma.sync sequence per output
// element, so the two are expected equal bit for bit.
at::Tensor delta_rule_chunked_fused_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                         const at::Tensor& beta, double scale, at::Tensor& state);

struct DeltaKernelTimes {
  double prep_us = 0, scan_us = 0, output_us = 0;  // output_us is 0 for the fused path
};

// One delta_rule_chunked_cuda call (fused: delta_rule_chunked_fused_cuda) with a cudaEvent before,
// between and after its launches; waits for it and returns each launch's time.
DeltaKernelTimes delta_rule_chunked_kernel_times(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 const at::Tensor& beta, double scale, at::Tensor& state,
                                                 bool fused = false);

}  // namespace testing

}  // namespace kernels
}  // namespace foxeval
