// What the recurrent baselines (Mamba-2, HGRN2, DeltaNet) share around their operators: the
// decoding state and slots, the segmented prefill, the LM scaffolding, and fla's block stack.
// The sequence operators themselves are models/layers/recurrent_ops.h.
#pragma once
#include <ATen/Functions.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/checkpoint/checkpoint.h"
#include "models/layers/layers.h"
#include "models/model.h"
#include "models/layers/recurrent_ops.h"

namespace foxeval {
namespace recurrent {

// The decoding state of a recurrent family: per layer a few tensors (conv histories,
// the recurrent state), the rows' left padding and the tokens consumed.
class RecurrentState : public DecodeState {
 public:
  RecurrentState(std::string family, int64_t batch, at::Tensor seq_start, int64_t layers, int64_t slots)
      : family(std::move(family)), batch(batch), seq_start(std::move(seq_start)),
        layers(layers, std::vector<at::Tensor>(slots)) {}
  int64_t batch_size() const override { return batch; }
  int64_t length() const override { return consumed; }

  std::string family;
  int64_t batch;
  at::Tensor seq_start;  // [B] int64 on the device, or undefined
  std::vector<std::vector<at::Tensor>> layers;
  int64_t consumed = 0;
};

// `state` as a RecurrentState of `family` for `batch` rows (nullptr for nullptr); throws otherwise.
RecurrentState* as_recurrent_state(DecodeState* state, const std::string& family, int64_t batch);

// Prefill of ids [B, T] through all layers `segment` tokens at a time, carrying the recurrent
// state between segments (a scratch state when `state` is null), so memory does not grow with T.
// `run(ids_part, state)` returns [B, T_part, hidden] fp32. Returns [B, T, hidden] fp32.
at::Tensor forward_in_segments(const at::Tensor& ids, RecurrentState* state, int64_t hidden, int64_t segment,
                               const std::function<std::unique_ptr<DecodeState>()>& make_state,
                               const std::function<at::Tensor(const at::Tensor&, RecurrentState*)>& run);

// Decoding slots of a recurrent family: one RecurrentState of S rows whose tensors (conv
// histories, recurrent states) keep their addresses; a decode step computes the new states and
// copies them back in place. The capacity does not bound anything (fixed-size states).
class RecurrentSlots : public SlotState {
 public:
  int64_t slots() const override { return state->batch; }
  int64_t capacity() const override { return capacity_; }
  void load(int64_t slot, DecodeState& prefilled) override;

  std::unique_ptr<RecurrentState> state;
  int64_t capacity_ = 0;
};

// Prefill runs through all layers this many tokens at a time (the families' default): memory
// stays bounded whatever the length, and longer segments were not faster in the segment sweep of
// `foxeval bench recurrent` (FOXEVAL_RECURRENT_SEGMENT) on the H100.
constexpr int64_t kSegment = 16384;

// The prefill segment: the family's default, or FOXEVAL_RECURRENT_SEGMENT=n tokens (A/B timing;
// activations grow with it).
int64_t segment_length(int64_t family_default);

// What the three recurrent families share: options, info, LM head, the decoding state and the
// segmented prefill. A family loads its weights, fills info_ (num_layers, hidden_size) and
// lm_head_, and implements forward_segment.
class RecurrentLM : public CausalLM {
 public:
  RecurrentLM(Checkpoint& checkpoint, const RunOptions& options, std::string family, int64_t slots, int64_t segment)
      : options_(options), loader_(make_loader(checkpoint, options)), family_(std::move(family)), slots_(slots),
        segment_(segment_length(segment)) {}

  const ModelInfo& info() const override { return info_; }
  const RunOptions& options() const override { return options_; }
  const at::Tensor& lm_head() const override { return lm_head_; }

  std::unique_ptr<DecodeState> new_state(int64_t batch, const at::Tensor& seq_start) override {
    at::Tensor start = seq_start.defined() ? seq_start.to(loader_.device, at::kLong) : at::Tensor();
    return std::make_unique<RecurrentState>(family_, batch, start, info_.num_layers, slots_);
  }

  at::Tensor forward(const at::Tensor& input_ids, DecodeState* base) override {
    RecurrentState* state = as_recurrent_state(base, family_, input_ids.size(0));
    at::Tensor ids = input_ids.to(loader_.device, at::kLong);
    return forward_in_segments(
        ids, state, info_.hidden_size, segment_, [&] { return new_state(ids.size(0), at::Tensor()); },
        [&](const at::Tensor& part, RecurrentState* st) { return forward_segment(part, st); });
  }

  bool has_slots() const override { return true; }
  std::unique_ptr<SlotState> new_slots(int64_t slots, int64_t capacity) override;
  at::Tensor decode_slots(const at::Tensor& ids, SlotState& slots) override;
  int64_t slot_bytes(int64_t capacity) const override;

 protected:
  // One segment through every layer, continuing from and updating `state` (null: fresh rows).
  virtual at::Tensor forward_segment(const at::Tensor& ids, RecurrentState* state) = 0;

  RunOptions options_;
  Loader loader_;
  ModelInfo info_;
  at::Tensor lm_head_;

 private:
  std::string family_;
  int64_t slots_, segment_;
  mutable int64_t slot_bytes_ = -1;  // measured once from a 1-slot state
};

// SwiGLU MLP of the fla models: down(silu(gate) * up) with [gate | up] = gate_proj(x); the
// product in fp32, rounded to the compute dtype as fla's swiglu_linear. Returns compute dtype.
at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& gate_proj, const at::Tensor& down_proj);

// The config.json settings fla's HGRN2 and DeltaNet share, read and checked alike: sizes,
// attn_mode (every fla kernel choice computes the same thing), the short convolution, the norm's
// eps, tied embeddings and the SwiGLU MLP (hidden_act swish only).
struct FlaCommonConfig {
  int64_t hidden_size = 0, num_layers = 0, vocab_size = 0, conv_size = 0, intermediate_size = 0;
  double eps = 1e-6;
  bool use_short_conv = false, tie_word_embeddings = false;
  std::string attn_mode;
};
FlaCommonConfig parse_fla_common(const Config& c, bool use_short_conv_default);

// The block stack fla's HGRN2 and DeltaNet share: per layer x += mixer(RMSNorm(x)), then
// x += SwiGLU(RMSNorm(x)) with the MLP input in the mixer output's dtype (fla's fused add + norm);
// fp32 residual stream; final RMSNorm. `Layer` has attn_norm, mlp_norm, gate_proj, down_proj;
// mixer(layer, normed_x, real_mask, state_slots) is the family's token mixer.
// x (fp32 residual stream) += delta; returns RMSNorm(x) in out_dtype. One fused kernel on CUDA
// (kernels/fused_glue.h, as the FoX block), the same ops elsewhere.
at::Tensor add_rms_norm(at::Tensor& x, const at::Tensor& delta, const at::Tensor& weight, double eps,
                        at::ScalarType out_dtype);

template <typename Layer, typename Mixer>
at::Tensor fla_block_stack(const at::Tensor& ids, RecurrentState* state, const at::Tensor& embeddings,
                           const std::vector<Layer>& layers, const at::Tensor& final_norm, double eps,
                           at::ScalarType compute, const at::Device& device, Mixer&& mixer) {
  const int64_t offset = state ? state->consumed : 0;
  at::Tensor real = state ? real_token_mask(state->seq_start, offset, ids.size(1), device) : at::Tensor();
  at::Tensor x = at::embedding(embeddings, ids).contiguous();
  if (layers.empty()) return foxeval::rms_norm(x, final_norm, eps, at::kFloat);
  // The mixers read h only through their projections, which cast it to the compute dtype: the
  // norm writes that dtype itself (the same bits, one pass instead of a cast per projection).
  at::Tensor h = foxeval::rms_norm(x, layers[0].attn_norm, eps, compute);
  for (size_t l = 0; l < layers.size(); ++l) {
    const Layer& w = layers[l];
    std::vector<at::Tensor>* slots = state ? &state->layers[l] : nullptr;
    at::Tensor a = mixer(w, h, real, slots);
    at::Tensor m = swiglu_mlp(add_rms_norm(x, a, w.mlp_norm, eps, a.scalar_type()), w.gate_proj, w.down_proj);
    const bool last = l + 1 == layers.size();
    h = add_rms_norm(x, m, last ? final_norm : layers[l + 1].attn_norm, eps, last ? at::kFloat : compute);
  }
  if (state) state->consumed += ids.size(1);
  return h;
}

}  // namespace recurrent
}  // namespace foxeval
