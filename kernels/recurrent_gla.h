// Fused CUDA kernels for gated linear attention (Mamba-2's SSD with a scalar gate, HGRN2 / GLA
// with a per-key gate), with the contract of recurrent::gated_linear_attention
// (models/layers/recurrent_ops.h):
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

// Chunked prefill, T >= 1 (chunks of 64 tokens: a pass over chunks per (b, h, 64x64 state
// tile) for the chunk start states, from 16 chunks on split into groups that run side by side
// and are joined by an elementwise combine; then one CTA per (chunk, b, h) for the outputs).
// `state` is replaced by a new tensor holding the final state.
at::Tensor gla_chunked_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                            double scale, at::Tensor& state);

// Mamba-2's SSD on the same kernels in the form of mamba_ssm's chunk scan (the model's GPU
// path): the inputs as the conv and dt give them, no fp32 copies. x [B, H, T, P] bf16 (a view
// of the conv output: any strides, last dim contiguous, 8-byte aligned rows), dt [B, H, T] fp32
// (any strides), C, Bm [B, H, T, N] bf16 (stride 0 over heads is read in place), g = dt * A
// [B, H, T, 1] fp32, D [H] fp32. The scan is gla_chunked_cuda's with q = C, k = Bm, v = x * dt
// (x * dt in fp32, rounded to bf16 where it is staged: the same v as that call on x * dt) and
// scale 1; returns y = S^T C + D x (fp32: the scan's sum, then + x * D) rounded to bf16, as
// [B, T, H, P] contiguous. N and P in {64, 128}. `state` as gla_chunked_cuda's.
bool ssd_cuda_supports(const at::Tensor& x, const at::Tensor& dt, const at::Tensor& C, const at::Tensor& Bm,
                       const at::Tensor& g, const at::Tensor& D);
at::Tensor ssd_chunked_cuda(const at::Tensor& x, const at::Tensor& dt, const at::Tensor& C, const at::Tensor& Bm,
                            const at::Tensor& g, const at::Tensor& D, at::Tensor& state);

namespace testing {
// Groups of the state pass: 0 = the automatic choice, 1 = one sequential pass, n = n groups
// (at most one per chunk). For tests and A/B timings.
void set_gla_state_groups(int groups);
}  // namespace testing

// One step (T == 1), fully fp32, updating `state` in place (allocated as zeros when undefined;
// a non-contiguous state is updated through a contiguous copy). No host sync, no allocation
// that depends on data: CUDA-graph safe.
at::Tensor gla_step_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                         double scale, at::Tensor& state);

}  // namespace kernels
}  // namespace foxeval
