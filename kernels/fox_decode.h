// One decode step of a FoX (or Transformer) attention layer, between the fused input projection
// and the attention kernel, in one CUDA kernel (models/fox/fox_model.cpp, `attention_slots`).
//
// At batch 1 a decode step is a chain of small kernels whose launch latency, not memory,
// sets its time: the ATen path runs ~18 per layer here (token shift of k and v and
// their state copies, the q/k group norms, rotary, log-sigmoid of the forget gate, the gather of
// the previous c, three cache appends). This kernel does all of it, per (slot, head):
//
//   k' = shift(k) = a_k * k_state + (1 - a_k) * k,  a_k = sigmoid(ks)   (FoX Pro; k_state := k)
//   v' = shift(v) likewise with vs and v_state
//   q'' = rotary(qk_norm(q)),  k'' = rotary(qk_norm(k'))                 (each where configured)
//   c = log_sigmoid(f) + c_cache[prev]                                   (0 + ... without a forget gate)
//   keys[w] = k'', values[w] = v', c_cache[w] = c,  w = min(len, C - 1), prev = max(w - 1, 0)
//   (a sliding window's ring of C positions: w = len % C, prev = (w - 1) mod C)
//   q_out = q'',  gate_out = og (a contiguous copy for the output norm)
//
// where q, k, v, ks, vs, f, og are slices of one row of `proj` (the concatenated projection).
// Every step rounds where the ATen path rounds (the shift mix, each norm's output, the rotary
// output in the compute dtype; c in fp32; no FMA contraction): the results equal the ATen
// path's up to the order of each norm's sum of squares (tests/test_slots_cuda.cpp: equal to the CPU
// steps within 1.8e-6 in fp32, to the unfused path exactly in bf16 on the fixtures).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace foxeval {

struct FoxDecodePrep {
  at::Tensor proj;                 // [S, N] (or [S, 1, N]) compute dtype, contiguous rows
  int64_t q_off = 0, k_off = 0, v_off = 0;   // column offsets of the slices in proj
  int64_t ks_off = -1, vs_off = -1;          // token-shift logits [H] (-1: no shift)
  int64_t f_off = -1;                         // forget gate logits [H] (-1: no forget gate, c += 0)
  int64_t og_off = -1, og_dim = 0;            // output gate [og_dim] (-1: none)
  int64_t heads = 0, head_dim = 0;           // H (= kv heads), D
  at::Tensor q_norm, k_norm;       // fp32 [H*D] or undefined (no qk norm)
  double qk_eps = 1e-5;
  at::Tensor inv_freq;             // fp32 [D/2] or undefined (no rotary)
  at::Tensor len;                  // [S] int64: tokens each slot holds before this step (its position)
  bool ring = false;               // the caches are a ring: position p at p % C
  at::Tensor keys, values;         // [S, H, C, D] compute dtype: written at w
  at::Tensor cum_log_fgate;        // [S, H, C] fp32: read at prev, written at w
  at::Tensor k_state, v_state;     // [S, H*D] compute dtype, updated in place (undefined: no shift)
};

// False when FOXEVAL_FUSED_GLUE=0 (A/B timing: every fused glue kernel off).
bool fox_decode_prep_enabled();

// Whether the kernel takes these arguments (CUDA, bf16/fp16/fp32, D in {64, 128}, shapes as
// above, FOXEVAL_FUSED_GLUE not 0); when false the caller runs the ATen path.
bool fox_decode_prep_supports(const FoxDecodePrep& a);

// Runs the step; returns {q [S, H, 1, D], gate [S, 1, og_dim] or undefined}.
std::pair<at::Tensor, at::Tensor> fox_decode_prep(const FoxDecodePrep& a);

}  // namespace foxeval
