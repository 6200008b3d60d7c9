// Sequence operators shared by the recurrent baselines (Mamba-2, HGRN2, DeltaNet); the language
// model scaffolding around them (state, slots, segmented prefill, block stack) is models/layers/recurrent_lm.h.
//
// Each operator has a chunked (parallel) form for prefill, exact in fp32 and bounded in memory
// (chunks of `chunk` tokens, the recurrent state carried between them, never a T x T matrix),
// and continues from / updates a state, so a prefill followed by single steps equals one
// prefill of the whole sequence. Inputs and states are fp32; callers round inputs to bf16
// first where the official kernels read bf16.
#pragma once
#include <ATen/Functions.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

namespace foxeval {
namespace recurrent {

// Real-token mask [B, T] (bool, true = real) for positions offset..offset+T-1 of rows whose first
// seq_start[b] positions are left padding; undefined when no position in the window is padding.
at::Tensor real_token_mask(const at::Tensor& seq_start, int64_t offset, int64_t T, const at::Device& device);

// Zeroes the padded positions of x [B, T, ...] (no-op for an undefined mask).
at::Tensor zero_padding(const at::Tensor& x, const at::Tensor& real_mask);

// Depthwise causal convolution over time, as nn.Conv1d(groups=C, padding=K-1)[:T] with the
// history taken from `state`:
//   out[t, c] = bias[c] + sum_j weight[c, j] * x[t - K + 1 + j, c]
// x [B, T, C] (any float dtype; computed in fp32), weight [C, K] fp32, bias [C] fp32 or undefined.
// state [B, K-1, C] fp32: the last K-1 inputs before x (zeros when undefined); when `state` is
// not null it then holds the last K-1 inputs including x (on a GPU the fused kernel of
// kernels/causal_conv.h updates a defined contiguous state in place; the ATen form replaces it).
// real_mask [B, T] bool (true = real token): padded inputs read as 0. silu_through: Mamba-2's
// conv under autocast, round(silu(round(out, dtype)), dtype).
// Returns [B, T, C] in out_dtype (fp32 unless asked: with silu_through = out_dtype the values
// are that dtype's already, so storing them in it loses nothing and halves the traffic). Where
// scan_impl(x, x's dtype) is kKernel (bf16/fp16 x on a GPU, unless FOXEVAL_RECURRENT_IMPL=aten)
// and causal_conv_cuda_supports() is true, the fused kernel runs; it gives the same bits as the
// ATen form.
at::Tensor causal_conv1d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor* state,
                         const at::Tensor& real_mask = at::Tensor(),
                         std::optional<at::ScalarType> silu_through = std::nullopt,
                         at::ScalarType out_dtype = at::kFloat);

// fla's ShortConvolution (HGRN2, DeltaNet): padded positions zeroed first, causal_conv1d without
// bias, optional SiLU, all in fp32, output in `out_dtype`. `state` as in causal_conv1d (null:
// no cache); the same kernel dispatch (one fused pass, same bits).
at::Tensor fla_short_conv(const at::Tensor& x, const at::Tensor& weight, bool silu, const at::Tensor& real_mask,
                          at::Tensor* state, at::ScalarType out_dtype);

// How a chunked scan runs on the GPU. kExact: the fp32 ATen forms below (CPU, fp32 runs, and the
// reference the kernels are tested against). kKernel: the fused CUDA kernels of kernels/recurrent_*
// (products on tensor cores from bf16 operands with fp32 accumulation, fp32 states: the precision
// class of the official Triton kernels, which read bf16), for bf16/fp16 runs on a GPU.
enum class ScanImpl { kExact, kKernel };

// kKernel when x is on a CUDA device, `compute` is bf16 or fp16 and the environment variable
// FOXEVAL_RECURRENT_IMPL is not "aten" (set it to time or compare the exact form on a GPU).
ScanImpl scan_impl(const at::Tensor& x, at::ScalarType compute);

// Gated linear attention (GLA / HGRN2; Mamba-2's SSD with a scalar gate):
//   S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T,   o_t = scale * S_t^T q_t
// q, k [B, H, T, K]; v [B, H, T, V]; g [B, H, T, K] (a log decay per key dimension) or
// [B, H, T, 1] (one per head and step); all fp32, g <= 0. `state` [B, H, K, V] fp32 is the
// initial state (zeros when undefined) and is replaced by the final one. Returns fp32 [B, H, T, V].
at::Tensor gated_linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                                  double scale, at::Tensor& state, ScanImpl impl = ScanImpl::kExact,
                                  int64_t chunk = 64);

// The delta rule (DeltaNet):
//   S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T,   o_t = scale * S_t^T q_t
// q, k [B, H, T, K]; v [B, H, T, V]; beta [B, H, T]; fp32 (q, k, v may be bf16: the chunked
// CUDA kernel reads them as they are, every other form casts them to fp32 first). Chunked with
// the WY representation (a unit-lower-triangular solve per chunk). `state` [B, H, K, V] as above.
at::Tensor delta_rule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                      double scale, at::Tensor& state, ScanImpl impl = ScanImpl::kExact, int64_t chunk = 64);

// Rounds x to `dtype` and back to fp32 (the bf16 rounding points of the official kernels;
// a no-op for fp32).
at::Tensor round_to(const at::Tensor& x, at::ScalarType dtype);

}  // namespace recurrent
}  // namespace foxeval
