// Fused CUDA kernels for the elementwise/reduction "glue" of the FoX block (norms, gates,
// SwiGLU, token shift, residual add, rotary). Math in fp32, one read and one write per tensor,
// 16-byte vector loads where the row length and pointers allow.
//
// Every function returns an undefined tensor when it does not support its arguments
// (CPU tensors, unsupported dtypes or shapes): the caller then runs its torch-op path.
// Supported dtypes: float32 and bfloat16 for every tensor argument unless noted.
// FOXEVAL_FUSED_GLUE=0 in the environment turns them all off (A/B timing).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// x [.., D], weight fp32 [D]: x * rsqrt(mean(x^2) + eps) * weight in out_dtype (x cast to fp32 first).
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, at::ScalarType out_dtype);

// Per group of D / num_groups of the last dim: RMSNorm * weight, times sigmoid(gate) when
// gate (same shape as x) is defined; in out_dtype. Groups of a multiple of 8 elements, at most 256.
// x (and gate) may be column slices of a wider matrix (rows evenly spaced): read in place.
// head_major (x [B, T, D], no gate): the result is [B, T, G, D / G] over a head-major
// [B, G, T, D / G] buffer, the layout the attention kernel reads fastest.
at::Tensor fused_group_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t num_groups, double eps,
                                at::ScalarType out_dtype, const at::Tensor& gate = at::Tensor(),
                                bool head_major = false);

// x fp32 [.., D] (contiguous) += delta (any supported dtype, same shape), in place; returns
// rms_norm(x, weight, eps) in out_dtype. x is left unchanged when it returns undefined.
at::Tensor fused_add_rms_norm(at::Tensor& x, const at::Tensor& delta, const at::Tensor& weight, double eps,
                              at::ScalarType out_dtype);

// y [.., 2I] (first half gate, second half up) -> act(gate) * up in out_dtype, in fp32 inside;
// act = silu (silu=true) or sigmoid.
at::Tensor fused_swiglu(const at::Tensor& y, bool silu, at::ScalarType out_dtype);

// FoX Pro token shift. proj [B, T, H*Dh], alpha_logit [B, T, H], prev [B, H*Dh] or undefined
// (zeros), pad_mask [B, T] bool or undefined (masked positions' proj read as 0):
//   out_t = a_t * p_{t-1} + (1 - a_t) * p_t, a = sigmoid(alpha_logit), fp32 inside,
// stored in proj's dtype. The new shift state (proj[:, T-1], masked) is the caller's. proj and
// alpha_logit may be column slices of a wider matrix. head_major: the result is [B, T, H, Dh] over a
// head-major [B, H, T, Dh] buffer.
at::Tensor fused_token_shift(const at::Tensor& proj, const at::Tensor& alpha_logit, const at::Tensor& prev,
                             const at::Tensor& pad_mask, bool head_major = false);

// NeoX rotary embedding of x [B, T, H, D] at positions [B, T] int64, inv_freq fp32 [D/2]:
// cos/sin of pos * inv_freq in fp32 rounded through x's dtype, the rotation in fp32, out in x's dtype.
// A head-major x (a [B, H, T, D] buffer seen as [B, T, H, D]) gives a head-major result.
at::Tensor fused_rotary(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& inv_freq);

}  // namespace foxeval
