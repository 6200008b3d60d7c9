// Fused CUDA kernels for gated linear attention (Mamba-2's SSD with a scalar gate, HGRN2 / GLA
// with a per-key gate), with the contract of recurrent::gated_linear_attention
// (models/recurrent_ops.h):
//   S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T,   o_t = scale * S_t^T q_t
// q, k [B, H, T, K]; v [B, H, T, V]; g [B, H, T, K] or [B, H, T, 1]; fp32, g <= 0, any strides
// with the last dim contiguous (stride-0 dims, e.g. Mamba-2's q/k expanded over heads, are read
// in place, never materialised). state [B, H, K, V] fp32: the initial state (zeros when
// undefined), replaced by the final one. Returns fp32 [B, H, T, V] (contiguous).
//
// Precision (the class of fla's chunk_gla and mamba_ssm's chunk scan): every product runs on
// tensor cores (mma.sync m16n8k16) from bf16 operands with fp32 accumulation; cumulative gates,
// exps, the intra-chunk diagonal blocks and the carried state are fp32; operands formed from
// gates (k * exp(b_last - b), q * exp(b), the intra-chunk scores) are rounded to bf16 right
// before their product, and the per-chunk start states are stored in bf16 (as fla's h).
// No exp of a positive number is ever formed, so any g <= 0 (e.g. -30 per step) is safe.
//
// Dispatch rule: gla_cuda_supports() says false for CPU tensors, non-fp32 tensors, K or V
// outside {64, 128} (e.g. the tiny test fixtures), a last dim that is not contiguous, B*H >
// 65535, or a GPU older than sm_80; the caller then runs the exact ATen form. That is the
// documented behaviour of ScanImpl::kKernel, not a silent fallback.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {
namespace kernels {

// Whether the kernels below take these arguments (see the dispatch rule above).
bool gla_cuda_supports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g);

// Chunked prefill, T >= 1 (chunks of 64 tokens: one pass over chunks per (b, h, 64x64 state
// tile) for the chunk start states, then one CTA per (chunk, b, h) for the outputs).
// `state` is replaced by a new tensor holding the final state.
at::Tensor gla_chunked_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                            double scale, at::Tensor& state);

// One step (T == 1), fully fp32, updating `state` in place (allocated as zeros when undefined;
// a non-contiguous state is updated through a contiguous copy). No host sync, no allocation
// that depends on data: CUDA-graph safe.
at::Tensor gla_step_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                         double scale, at::Tensor& state);

}  // namespace kernels
}  // namespace foxeval
