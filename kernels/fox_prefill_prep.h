// A FoX (or Transformer) prefill's glue between the fused input projection and the attention
// kernel, in one CUDA kernel (models/fox/fox_model.cpp, `attention`).
//
// The separate kernels (kernels/fused_glue.h) make q, k and v in up to five passes over them a
// layer: the token shift of k and of v, the qk-norm of q and of k, rotary of q and k, each
// writing a tensor the next one reads. At 64k tokens that is ~1.2 GB of extra traffic a layer.
// This kernel reads each projection slice once and writes q, k and v once:
//
//   k' = shift(k) = a_k * k_{t-1} + (1 - a_k) * k_t,  a_k = sigmoid(ks_t)   (FoX Pro)
//   v' = shift(v) likewise with vs
//   q'' = rotary(qk_norm(q)),  k'' = rotary(qk_norm(k'))                   (each where configured)
//
// Every step rounds where the separate kernels round (the shift mix, each norm's output, the
// rotary output, in the projection's dtype; no FMA contraction in the mixes) and the norm sums
// its squares in the same order (8 elements a thread, then xor shuffles over the head's lanes),
// so the result equals theirs bit for bit (tests/test_fused_glue.cpp).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace foxeval {

struct FoxPrefillPrep {
  at::Tensor q, k, v;                        // [B, T, H*Dh]: column slices of the projection (evenly spaced rows)
  at::Tensor k_shift_logit, v_shift_logit;   // [B, T, H] slices, or undefined (no shift of that tensor)
  at::Tensor k_prev, v_prev;                 // [B, H*Dh] shift states (the token before), or undefined (zeros)
  at::Tensor pad_mask;                       // [B, T] bool (left padding: read as 0 by the shift), or undefined
  at::Tensor q_norm, k_norm;                 // fp32 [H*Dh] qk-norm weights, or undefined (no qk-norm)
  double norm_eps = 1e-5;
  at::Tensor positions, inv_freq;            // rotary: [B, T] int64 and fp32 [Dh/2], or undefined
  int64_t heads = 0;                         // H (one kv head per head)
};

// q, k, v as [B, T, H, Dh] views of head-major [B, H, T, Dh] buffers; v is the projection's own
// slice when it has no shift (the attention kernel reads it in place).
struct FoxPrefillQKV {
  at::Tensor q, k, v;
};

// Undefined tensors when the kernel does not take these arguments (CPU tensors, a dtype other
// than fp32/bf16, Dh not one of 16, 32, 64, 128, 256, rows not 16-byte aligned, FOXEVAL_FUSED_GLUE=0):
// the caller then runs the separate kernels.
FoxPrefillQKV fox_prefill_prep(const FoxPrefillPrep& a);

}  // namespace foxeval
