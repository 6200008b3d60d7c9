// Fused depthwise causal convolution of the recurrent families (the CUDA form of
// models/layers/recurrent_ops.h: causal_conv1d, fla_short_conv, and Mamba-2's conv + SiLU): one pass
// that reads x once and writes the output once, where the ATen form runs ~15 elementwise passes
// (cast, cat with the history, K multiplies and K adds, state clone, the rounding points, SiLU).
//
//   out[b, t, c] = bias[c] + sum_{j=0..K-1} weight[c, j] * xp[b, t + j, c],  xp = cat(history, x)
//
// The fp32 sum is bit-identical to the ATen form: the same order (bias or +0, then j = 0..K-1),
// each product rounded and then added (__fmul_rn / __fadd_rn, never an FMA), padded positions
// read as +0 exactly as masked_fill writes them. The epilogue applies the callers' rounding
// points (see CausalConvSpec), SiLU as ATen's x / (1 + exp(-x)) in fp32.
//
// The state [B, K-1, C] fp32 is read as the history (zeros when undefined) and then holds the
// last K-1 inputs including x (padded ones as 0; for T < K-1 the newest part of the old history
// stays). A defined state is updated IN PLACE (the tensor keeps its address, as decoding slots
// and CUDA graphs need); an undefined one is allocated. T == 1 (decode) launches one small
// kernel with no host synchronisation and no data-dependent allocation: CUDA-graph safe.
//
// Dispatch rule: causal_conv_cuda_supports() says false for arguments the kernel does not take
// (CPU tensors, K outside 2..4, other dtypes, a non-contiguous or misshaped state, a last dim
// of x that is not contiguous); the caller then runs the ATen form, which gives the same bits.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

struct CausalConvSpec {
  at::Tensor bias;                            // [C] fp32, or undefined (no bias)
  at::Tensor real_mask;                       // [B, T] bool, true = real token; padded inputs read as 0
  bool silu = false;                          // SiLU after the sum
  at::ScalarType round_before = at::kFloat;   // the fp32 sum rounded through this dtype before SiLU (kFloat: not)
  at::ScalarType round_after = at::kFloat;    // the result rounded through this dtype (kFloat: not)
  at::ScalarType out_dtype = at::kFloat;      // dtype of the returned [B, T, C] tensor
};

// Whether causal_conv_cuda takes these arguments. x [B, T, C] bf16/fp16/fp32 on a CUDA device
// with the last dim contiguous; weight [C, K] fp32 contiguous, 2 <= K <= 4; `state` null, or
// pointing to an undefined tensor or a contiguous fp32 [B, K-1, C] one; spec's tensors on x's
// device (bias contiguous fp32 [C], real_mask bool [B, T]); its dtypes fp32/bf16/fp16.
bool causal_conv_cuda_supports(const at::Tensor& x, const at::Tensor& weight, const at::Tensor* state,
                               const CausalConvSpec& spec);

// The convolution (call only where causal_conv_cuda_supports is true; throws otherwise).
// Returns [B, T, C] contiguous in spec.out_dtype; updates *state as above when state is not null.
at::Tensor causal_conv_cuda(const at::Tensor& x, const at::Tensor& weight, at::Tensor* state,
                            const CausalConvSpec& spec);

}  // namespace foxeval
