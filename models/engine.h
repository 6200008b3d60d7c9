// The engine: what tasks ask of a model. Scoring gives per-token log-likelihoods computed from
// hidden states in chunks, so full [T, vocab] logits never exist for long sequences.
#pragma once
#include <ATen/core/Tensor.h>

#include "models/model.h"

namespace foxeval {

// log p(labels[b, t] | input_ids[b, :t+1]) as float32 [B, T], on the model's device.
// On Hopper with at least 256 positions the head computes the loss in its epilogue (no logits in
// memory, kernels/lm_head_loss.h; `chunk` does not apply); elsewhere logits are made `chunk`
// positions at a time (default: about 256M logits on a GPU, 64M elsewhere).
at::Tensor token_logprobs(CausalLM& model, const at::Tensor& input_ids, const at::Tensor& labels,
                          DecodeState* state = nullptr, int64_t chunk = 0);

// Same, from final-norm hidden states [B, T, hidden] already computed.
at::Tensor logprobs_from_hidden(const CausalLM& model, const at::Tensor& hidden, const at::Tensor& labels,
                                int64_t chunk = 0);

// Full logits [B, T, vocab] in float32: for short inputs and tests only.
at::Tensor logits(CausalLM& model, const at::Tensor& input_ids, DecodeState* state = nullptr);

}  // namespace foxeval
