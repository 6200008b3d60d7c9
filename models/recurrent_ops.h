// Sequence operators shared by the recurrent baselines (Mamba-2, HGRN2, DeltaNet).
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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/checkpoint.h"
#include "models/layers.h"
#include "models/model.h"

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

// Prefill runs through all layers this many tokens at a time (the families' default). 760M at
// 65536 tokens on the H100 (bench recurrent, segments of 4096 / 8192 / 16384 / 65536): Mamba-2
// 0.393 / 0.370 / 0.362 / 0.366 s, HGRN2 0.342 / 0.339 / 0.329 / 0.320 s, DeltaNet 0.413 / 0.402 /
// 0.392 / 0.382 s, peak 2.4 / 2.6 / 3.0 / 4.5-5.3 GiB.
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
