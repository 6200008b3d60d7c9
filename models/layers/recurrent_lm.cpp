#include "models/layers/recurrent_lm.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "data/errors.h"
#include "data/switches.h"
#include "kernels/fused_glue.h"
#include "kernels/glu_gemm.h"

namespace foxeval {
namespace recurrent {

void RecurrentSlots::load(int64_t slot, DecodeState& prefilled) {
  auto* src = dynamic_cast<RecurrentState*>(&prefilled);
  if (!src || src->family != state->family) throw Error(state->family + " slots: a decoding state from another family");
  if (src->batch != 1 || src->seq_start.defined())
    throw Error(state->family + " slots: load takes a batch-1 state without padding");
  if (slot < 0 || slot >= state->batch) throw Error(fmt::format("{} slots: no slot {} of {}", state->family, slot, state->batch));
  for (size_t l = 0; l < state->layers.size(); ++l)
    for (size_t k = 0; k < state->layers[l].size(); ++k) {
      at::Tensor& dst = state->layers[l][k];
      if (!dst.defined()) continue;
      const at::Tensor& from = src->layers[l][k];
      if (from.defined()) dst.select(0, slot).copy_(from.select(0, 0));
      else dst.select(0, slot).zero_();
    }
}

std::unique_ptr<SlotState> RecurrentLM::new_slots(int64_t slots, int64_t capacity) {
  if (slots < 1) throw Error(fmt::format("{} slots: {} slots", family_, slots));
  auto out = std::make_unique<RecurrentSlots>();
  out->capacity_ = capacity;
  out->state.reset(static_cast<RecurrentState*>(new_state(slots, at::Tensor()).release()));
  // One step on zeros brings every state tensor into being at its final shape; then zero them.
  forward_segment(at::zeros({slots, 1}, at::TensorOptions().device(loader_.device).dtype(at::kLong)), out->state.get());
  for (auto& layer : out->state->layers)
    for (at::Tensor& t : layer)
      if (t.defined()) t = t.contiguous().zero_();
  out->state->consumed = 0;
  return out;
}

at::Tensor RecurrentLM::decode_slots(const at::Tensor& ids, SlotState& base) {
  auto* slots = dynamic_cast<RecurrentSlots*>(&base);
  if (!slots || slots->state->family != family_) throw Error(family_ + ": decoding slots from another family");
  RecurrentState& st = *slots->state;
  if (ids.dim() != 1 || ids.size(0) != st.batch) throw Error(fmt::format("{}: decode_slots takes [{}] ids", family_, st.batch));
  const auto fixed = st.layers;  // the buffers every step reads and writes
  at::Tensor h = forward_segment(ids.view({st.batch, 1}), &st);
  for (size_t l = 0; l < st.layers.size(); ++l)
    for (size_t k = 0; k < st.layers[l].size(); ++k) {
      if (!fixed[l][k].defined()) continue;
      if (!st.layers[l][k].is_same(fixed[l][k])) fixed[l][k].copy_(st.layers[l][k]);
      st.layers[l][k] = fixed[l][k];
    }
  st.consumed = 0;  // no padding, so the count matters to nothing; keep it from growing
  return h.view({st.batch, -1});
}

int64_t RecurrentLM::slot_bytes(int64_t capacity) const {
  (void)capacity;  // fixed-size states
  if (slot_bytes_ < 0) {
    auto one = const_cast<RecurrentLM*>(this)->new_slots(1, 1);
    int64_t bytes = 0;
    for (const auto& layer : static_cast<RecurrentSlots&>(*one).state->layers)
      for (const at::Tensor& t : layer)
        if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
    slot_bytes_ = bytes;
  }
  return slot_bytes_;
}

RecurrentState* as_recurrent_state(DecodeState* state, const std::string& family, int64_t batch) {
  if (!state) return nullptr;
  auto* rs = dynamic_cast<RecurrentState*>(state);
  if (!rs || rs->family != family) throw Error(family + " model: the decoding state belongs to another family");
  if (rs->batch != batch)
    throw Error(family + " model: input batch " + std::to_string(batch) + " differs from the decoding state's " +
                std::to_string(rs->batch));
  return rs;
}

int64_t segment_length(int64_t family_default) {
  const char* v = switch_value("FOXEVAL_RECURRENT_SEGMENT");
  if (!v) return family_default;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 64) throw Error(fmt::format("FOXEVAL_RECURRENT_SEGMENT={}: expected a token count >= 64", v));
  return n;
}

at::Tensor forward_in_segments(const at::Tensor& ids, RecurrentState* state, int64_t hidden, int64_t segment,
                               const std::function<std::unique_ptr<DecodeState>()>& make_state,
                               const std::function<at::Tensor(const at::Tensor&, RecurrentState*)>& run) {
  const int64_t T = ids.size(1);
  if (T <= segment) return run(ids, state);
  std::unique_ptr<DecodeState> scratch;
  if (!state) {
    scratch = make_state();
    state = static_cast<RecurrentState*>(scratch.get());
  }
  at::Tensor out = at::empty({ids.size(0), T, hidden}, ids.options().dtype(at::kFloat));
  for (int64_t t0 = 0; t0 < T; t0 += segment) {
    const int64_t n = std::min(segment, T - t0);
    out.narrow(1, t0, n).copy_(run(ids.narrow(1, t0, n), state));
  }
  return out;
}

at::Tensor add_rms_norm(at::Tensor& x, const at::Tensor& delta, const at::Tensor& weight, double eps,
                        at::ScalarType out_dtype) {
  at::Tensor y = fused_add_rms_norm(x, delta, weight, eps, out_dtype);
  if (y.defined()) return y;
  x = x + delta.to(at::kFloat);
  return foxeval::rms_norm(x, weight, eps, out_dtype);
}

at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& gate_proj, const at::Tensor& down_proj) {
  const at::Tensor xm = x.to(gate_proj.scalar_type());  // once, for whichever path runs
  if (down_proj.scalar_type() == at::kBFloat16 && glu_gemm_supports(xm, gate_proj)) {
    // prefill: silu(gate) * up in the gate_up GEMM's epilogue (kernels/glu_gemm.h), the same arithmetic
    at::Tensor p = glu_gemm(xm, gate_proj, /*silu=*/true);
    if (p.defined()) return at::linear(p, down_proj);
  }
  at::Tensor gu = at::linear(xm, gate_proj);
  if (gu.is_cuda()) {  // one fused kernel (the FoX MLP's): silu(gate) * up in fp32, rounded once
    at::Tensor p = fused_swiglu(gu, /*silu=*/true, down_proj.scalar_type());
    if (p.defined()) return at::linear(p, down_proj);
  }
  auto parts = gu.chunk(2, -1);
  at::Tensor z = (at::silu(parts[0].to(at::kFloat)) * parts[1].to(at::kFloat)).to(down_proj.scalar_type());
  return at::linear(z, down_proj);
}

FlaCommonConfig parse_fla_common(const Config& c, bool use_short_conv_default) {
  FlaCommonConfig m;
  m.hidden_size = c.get_int("hidden_size");
  m.num_layers = c.get_int("num_hidden_layers");
  m.vocab_size = c.get_int("vocab_size");
  m.attn_mode = c.get_string("attn_mode", "chunk");
  if (m.attn_mode != "chunk" && m.attn_mode != "fused_chunk" && m.attn_mode != "fused_recurrent")
    c.fail("attn_mode", fmt::format("= \"{}\" is not chunk, fused_chunk or fused_recurrent", m.attn_mode));
  m.use_short_conv = c.get_bool("use_short_conv", use_short_conv_default);
  m.conv_size = c.get_int("conv_size", 4);
  if (m.use_short_conv && m.conv_size < 1) c.fail("conv_size", "must be positive");
  m.eps = c.get_double("norm_eps", 1e-6);
  m.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
  const std::string act = c.get_string("hidden_act", "swish");
  if (act != "swish" && act != "silu") c.fail("hidden_act", fmt::format("= \"{}\": only swish is supported", act));
  m.intermediate_size = mlp_intermediate_size(c, m.hidden_size);
  return m;
}

}  // namespace recurrent
}  // namespace foxeval
