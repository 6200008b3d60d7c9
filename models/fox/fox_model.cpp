// The FoX block (Lin et al., ICLR 2025), with every option the paper's checkpoints use.
// Numerics follow the official evaluation: see models/layers/layers.h.
#include "models/fox/fox_model.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "data/errors.h"
#include "kernels/env_switch.h"
#include "kernels/fgate_scan.h"
#include "kernels/forgetting_attention.h"
#include "kernels/fox_decode.h"
#include "kernels/fox_prefill_prep.h"
#include "kernels/fused_glue.h"
#include "kernels/gemv.h"
#include "kernels/glu_gemm.h"
#include "models/fox/fox_config.h"
#include "models/layers/layers.h"
#include "models/layers/rotary.h"
#include "models/generation/sequence_cache.h"
#include "models/generation/window_cache.h"
#include "models/registry.h"
#include "models/stage_timer.h"

namespace foxeval {
namespace {

struct AttentionWeights {
  at::Tensor q_proj, k_proj, v_proj, o_proj;   // matmul weights
  at::Tensor k_shift_proj, v_shift_proj;       // [heads, hidden]: per-head token-shift mix
  at::Tensor fgate_weight, fgate_bias;         // forget gate (bias only for bias_only/fixed)
  at::Tensor ogate_proj;
  at::Tensor q_norm, k_norm, output_norm;      // fp32 norm weights
  // On a GPU: every projection of the block's input as one matmul weight (the ones above are
  // views of it), for decode steps (`attention_slots`) and the prefill (`project_inputs`).
  // in_bias is zero but for the forget gate's rows; offsets are columns of the product.
  at::Tensor in_proj, in_bias;
  int64_t q_off = -1, k_off = -1, v_off = -1, ks_off = -1, vs_off = -1, f_off = -1, og_off = -1;
};

struct Block {
  at::Tensor attn_norm, mlp_norm;  // fp32
  AttentionWeights attn;
  at::Tensor mlp_gate_proj, mlp_down_proj;
};

// Per layer: the KV cache, c of every cached key, and the token-shift states. With a sliding
// window the caches forget keys no later query sees (`dropped` of them, from the front): memory
// stays about 2W however long the sequence.
struct LayerState {
  SequenceCache keys, values, cum_log_fgate;
  at::Tensor k_shift, v_shift;  // [B, kv_dim]: the last k/v projections (before the shift)
  int64_t dropped = 0;
};

class FoxState : public DecodeState {
 public:
  FoxState(int64_t batch, at::Tensor seq_start, int64_t layers, int64_t window)
      : batch_(batch), seq_start_(std::move(seq_start)), layers_(layers), window_(window) {}
  int64_t batch_size() const override { return batch_; }
  int64_t length() const override { return length_; }
  void reserve(int64_t total_length) override {
    if (window_ > 0) total_length = std::min(total_length, window_keep_limit(window_) + 1);
    for (LayerState& l : layers_) {
      l.keys.reserve(total_length);
      l.values.reserve(total_length);
      l.cum_log_fgate.reserve(total_length);
    }
  }

  int64_t batch_;
  at::Tensor seq_start_;  // [B] int64 on the device, or undefined
  std::vector<LayerState> layers_;
  int64_t window_ = 0;  // the model's sliding window (0: none)
  int64_t length_ = 0;
};

// Decoding slots (model.h): per layer fixed-capacity caches [S, heads, R, ...], zero past each
// row's length, and the token-shift states; `len` [S] on the device = tokens each row holds.
// R = C, or with a sliding window W < C a ring of R = W positions: the token at position p sits at
// p % R, and a decode step attends to every entry held (exactly its window), so memory is flat in
// the sequence length.
struct SlotLayer {
  at::Tensor keys, values;      // [S, Hkv, C, D] compute dtype
  at::Tensor cum_log_fgate;     // [S, H, C] fp32
  at::Tensor k_shift, v_shift;  // [S, kv] compute dtype (undefined without the shift)
};

class FoxSlots : public SlotState {
 public:
  int64_t slots() const override { return S; }
  int64_t capacity() const override { return C; }
  void load(int64_t slot, DecodeState& prefilled) override {
    auto* st = dynamic_cast<FoxState*>(&prefilled);
    if (!st) throw Error("FoX slots: a decoding state from another family");
    if (st->batch_ != 1 || st->seq_start_.defined()) throw Error("FoX slots: load takes a batch-1 state without padding");
    const int64_t n = st->length_;
    if (n < 1 || n > C) throw Error(fmt::format("FoX slots: a sequence of {} tokens does not fit capacity {}", n, C));
    if (slot < 0 || slot >= S) throw Error(fmt::format("FoX slots: no slot {} of {}", slot, S));
    // The last m tokens (all of them without a ring), position p at p % R (models/generation/window_cache.h).
    const int64_t m = std::min(n, R);
    for (size_t l = 0; l < layers.size(); ++l) {
      SlotLayer& d = layers[l];
      LayerState& src = st->layers_[l];
      for (auto [dst, from] : {std::pair{d.keys, src.keys.held()}, std::pair{d.values, src.values.held()},
                               std::pair{d.cum_log_fgate, src.cum_log_fgate.held()}}) {
        at::Tensor row = dst.select(0, slot);
        // Stale entries of an earlier sequence past n would enter the pruning bound: zeroed.
        if (from.data_ptr() == row.data_ptr() && src.dropped == 0 && n <= R) {  // prefilled in place (prefill_state)
          if (n < R) row.narrow(1, n, R - n).zero_();
          continue;
        }
        at::Tensor ring = ring_from_tail(from.select(0, 0), n, R, 1);
        if (n <= R && from.data_ptr() == row.data_ptr()) ring = ring.clone();  // zero_ below would clear it
        row.zero_();
        row.narrow(1, 0, m).copy_(ring);
      }
      if (d.k_shift.defined()) d.k_shift.select(0, slot).copy_(src.k_shift.select(0, 0));
      if (d.v_shift.defined()) d.v_shift.select(0, slot).copy_(src.v_shift.select(0, 0));
    }
    len.select(0, slot).fill_(n);
  }
  void clear(int64_t slot) override { len.select(0, slot).fill_(0); }
  std::unique_ptr<DecodeState> prefill_state(int64_t slot) override {
    if (slot < 0 || slot >= S) throw Error(fmt::format("FoX slots: no slot {} of {}", slot, S));
    auto st = std::make_unique<FoxState>(1, at::Tensor(), static_cast<int64_t>(layers.size()), window);
    for (size_t l = 0; l < layers.size(); ++l) {  // [1, heads, C, ...] views, appended along C
      st->layers_[l].keys.adopt(layers[l].keys.narrow(0, slot, 1), 2);
      st->layers_[l].values.adopt(layers[l].values.narrow(0, slot, 1), 2);
      st->layers_[l].cum_log_fgate.adopt(layers[l].cum_log_fgate.narrow(0, slot, 1), 2);
    }
    return st;
  }

  int64_t S = 0, C = 0;
  int64_t R = 0;                    // positions a row's caches hold: C, or a window's ring (< C)
  bool ring = false;                // R < C: the token at position p sits at p % R
  at::Tensor len;                   // [S] int64
  at::Tensor flat_kv, flat_h;       // [S, Hkv], [S, H]: (s * heads + h) * C, for the appends
  std::vector<SlotLayer> layers;
  int64_t window = 0;  // the model's sliding window (0: none), for prefill_state
};

// One decode step's view of the slots: where each row's new token goes and how many keys it then holds.
struct SlotStep {
  FoxSlots* slots;
  at::Tensor write_at;  // [S] = min(len, C - 1), or len % R on a ring
  at::Tensor kv_len;    // [S] = min(len + 1, R): entries attended to
  // Flat element indices, the same for every layer: each row's new key in [S * Hkv * C, D], its
  // new c and its previous c in [S * H * C].
  at::Tensor kv_rows, c_rows, prev_c;
};

class ForgettingTransformer : public CausalLM {
 public:
  ForgettingTransformer(Checkpoint& ckpt, const RunOptions& options, FoxConfig config)
      : cfg_(std::move(config)), options_(options), loader_(make_loader(ckpt, options)) {
    apply_pruning_option(options.log_pruning_tolerance);
    load_weights();
    fill_info(ckpt);
  }

  const ModelInfo& info() const override { return info_; }
  const RunOptions& options() const override { return options_; }
  const at::Tensor& lm_head() const override { return lm_head_; }

  DecayInfo decay_info() const override {
    DecayInfo d;
    d.layers = cfg_.num_layers;
    d.heads = cfg_.num_heads;
    d.has_attention = true;
    d.head_dim = cfg_.head_dim;
    if (cfg_.fgate_type == "full") {
      d.kind = "forget_gate";
      d.what = "FoX forget gate f_t = sigmoid(w_f . x_t + b_f), one per head and token (data-dependent); "
               "key j counts at query i with exp(c_i - c_j), c_t = sum_{l<=t} log f_l";
    } else if (cfg_.fgate_type == "none" && cfg_.window_size > 0) {
      d.what = fmt::format("no forget gate: sliding-window attention, a hard window of W = {} (window_size): key j counts in "
                           "full at query i when i - {} < j <= i, not at all before",
                           cfg_.window_size, cfg_.window_size);
    } else if (cfg_.fgate_type == "none") {
      d.what = "no forget gate (fgate_type none): softmax attention without decay, every key counts in full";
    } else {
      d.kind = "forget_gate";
      d.what = fmt::format("FoX forget gate ({}): f = sigmoid(b_f), one constant per head, the same at every token",
                           cfg_.fgate_type);
    }
    return d;
  }

  std::unique_ptr<DecodeState> new_state(int64_t batch, const at::Tensor& seq_start) override {
    at::Tensor start = seq_start.defined() ? seq_start.to(loader_.device, at::kLong) : at::Tensor();
    return std::make_unique<FoxState>(batch, start, cfg_.num_layers, cfg_.window_size);
  }

  bool has_slots() const override { return true; }
  bool prefills_in_slot() const override { return true; }  // FoxSlots::prefill_state
  std::unique_ptr<SlotState> new_slots(int64_t slots, int64_t capacity) override {
    if (slots < 1 || capacity < 1) throw Error(fmt::format("FoX slots: {} slots of {} tokens", slots, capacity));
    auto s = std::make_unique<FoxSlots>();
    s->S = slots;
    s->C = capacity;
    s->R = ring_capacity(capacity);
    s->ring = s->R < capacity;
    s->window = cfg_.window_size;
    const int64_t H = cfg_.num_heads, Hkv = cfg_.num_kv_heads, D = cfg_.head_dim, R = s->R;
    const auto mm = at::TensorOptions().device(loader_.device).dtype(loader_.compute);
    const auto f32 = mm.dtype(at::kFloat), i64 = mm.dtype(at::kLong);
    s->len = at::zeros({slots}, i64);
    s->flat_kv = (at::arange(slots, i64).view({slots, 1}) * Hkv + at::arange(Hkv, i64).view({1, Hkv})) * R;
    s->flat_h = (at::arange(slots, i64).view({slots, 1}) * H + at::arange(H, i64).view({1, H})) * R;
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      SlotLayer d;
      d.keys = at::zeros({slots, Hkv, R, D}, mm);
      d.values = at::zeros({slots, Hkv, R, D}, mm);
      d.cum_log_fgate = at::zeros({slots, H, R}, f32);
      if (cfg_.use_k_shift) d.k_shift = at::zeros({slots, Hkv * D}, mm);
      if (cfg_.use_v_shift) d.v_shift = at::zeros({slots, Hkv * D}, mm);
      s->layers.push_back(std::move(d));
    }
    return s;
  }

  // Positions a slot of `capacity` tokens keeps per layer: all, or a sliding window's W.
  int64_t ring_capacity(int64_t capacity) const { return window_ring_size(capacity, cfg_.window_size); }

  int64_t slot_bytes(int64_t capacity) const override {
    const int64_t elem = at::elementSize(loader_.compute), kv = cfg_.num_kv_heads * cfg_.head_dim;
    const int64_t per_layer = ring_capacity(capacity) * (2 * kv * elem + cfg_.num_heads * 4) + 2 * kv * elem;
    return per_layer * cfg_.num_layers + 8;
  }

  at::Tensor decode_slots(const at::Tensor& ids, SlotState& base) override {
    auto* slots = dynamic_cast<FoxSlots*>(&base);
    if (!slots) throw Error("FoX model: decoding slots from another family");
    const int64_t S = slots->S;
    if (ids.dim() != 1 || ids.size(0) != S) throw Error(fmt::format("FoX model: decode_slots takes [{}] ids", S));
    const int64_t R = slots->R;
    SlotStep step{slots, {}, (slots->len + 1).clamp_max(R), {}, {}, {}};
    // Every layer takes attention_slots' fused step (it writes the caches itself) or none does.
    const bool fused = ids.is_cuda() && fused_decode_config();
    if (!fused) {  // the caches are written by flat row index (six small kernels a step the fused step skips)
      at::Tensor prev;
      if (slots->ring) {
        step.write_at = slots->len.remainder(R);
        prev = (step.write_at + (R - 1)).remainder(R);
      } else {
        step.write_at = slots->len.clamp_max(slots->C - 1);
        prev = (step.write_at - 1).clamp_min(0);
      }
      step.kv_rows = (slots->flat_kv + step.write_at.view({S, 1})).view(-1);
      step.c_rows = (slots->flat_h + step.write_at.view({S, 1})).view(-1);
      step.prev_c = (slots->flat_h + prev.view({S, 1})).view(-1);
    }
    at::Tensor x = at::embedding(embeddings_, ids.view({S, 1}));
    at::Tensor h = blocks(x, slots->len.view({S, 1}), at::Tensor(), nullptr, &step);
    if (slots->ring) slots->len.add_(1).clamp_max_(slots->C);  // the position; kv_len stops at R
    else slots->len.copy_(step.kv_len);
    return h.view({S, -1});
  }

  at::Tensor forward(const at::Tensor& input_ids, DecodeState* base_state) override {
    FoxState* state = nullptr;
    if (base_state) {
      state = dynamic_cast<FoxState*>(base_state);
      if (!state) throw Error("FoX model: decoding state from another family");
      if (state->batch_ != input_ids.size(0)) throw Error("FoX model: batch size differs from the decoding state");
    }
    const int64_t offset = state ? state->length_ : 0;
    const int64_t T = input_ids.size(1);
    at::Tensor ids = input_ids.to(loader_.device, at::kLong);
    at::Tensor x;
    {
      StageTimer timer("embedding");
      x = at::embedding(embeddings_, ids);  // fp32 residual stream
    }
    // Positions (RoPE) and padding masks are per row when rows are left padded.
    at::Tensor positions = at::arange(offset, offset + T, ids.options()).unsqueeze(0).expand({ids.size(0), T});
    at::Tensor seq_start = state ? state->seq_start_ : at::Tensor();
    if (seq_start.defined()) positions = positions - seq_start.unsqueeze(1);
    at::Tensor h = blocks(x, positions, seq_start, state, nullptr);
    if (state) state->length_ += T;
    return h;
  }

 private:
  void apply_pruning_option(const std::string& value) {
    if (value.empty()) return;  // the checkpoint's own setting
    if (value == "none") {
      cfg_.has_log_pruning_tolerance = false;
      return;
    }
    size_t used = 0;
    double t = 0;
    try {
      t = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || !std::isfinite(t))
      throw Error(fmt::format("--log-pruning-tolerance {}: not a number or \"none\"", value));
    cfg_.has_log_pruning_tolerance = true;
    cfg_.log_pruning_tolerance = t;
  }

  // The block stack on the fp32 residual stream x, with a decoding state, decoding slots or neither.
  // Each residual add is fused with the next norm (one kernel on CUDA, torch ops elsewhere).
  at::Tensor blocks(at::Tensor& x, const at::Tensor& positions, const at::Tensor& seq_start, FoxState* state,
                    const SlotStep* step) {
    if (cfg_.num_layers == 0) return rms_norm(x, final_norm_, cfg_.norm_eps, at::kFloat);
    at::Tensor h;
    {
      StageTimer timer("add+rms_norm");
      h = rms_norm(x, blocks_[0].attn_norm, cfg_.norm_eps, loader_.compute);
    }
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const Block& b = blocks_[l];
      LayerState* ls = state ? &state->layers_[l] : nullptr;
      SlotLayer* sl = step ? &step->slots->layers[l] : nullptr;
      h = add_rms_norm(x, attention(l, b.attn, h, positions, seq_start, ls, sl, step), b.mlp_norm, loader_.compute);
      const bool last = l + 1 == cfg_.num_layers;
      h = add_rms_norm(x, mlp(b, h), last ? final_norm_ : blocks_[l + 1].attn_norm, last ? at::kFloat : loader_.compute);
    }
    return h;
  }

  // x (fp32 residual stream, updated in place) += delta; returns rms_norm(x, weight).
  at::Tensor add_rms_norm(at::Tensor& x, const at::Tensor& delta, const at::Tensor& weight, at::ScalarType out_dtype) {
    StageTimer timer("add+rms_norm");
    at::Tensor y = fused_add_rms_norm(x, delta, weight, cfg_.norm_eps, out_dtype);
    if (y.defined()) return y;
    x = x + delta.to(at::kFloat);
    return rms_norm(x, weight, cfg_.norm_eps, out_dtype);
  }

  at::Tensor take_fp32(const std::string& name, std::vector<int64_t> shape) { return loader_.fp32(name, shape); }
  at::Tensor take_mm(const std::string& name, std::vector<int64_t> shape) { return loader_.matmul_weight(name, shape); }

  void load_weights() {
    const int64_t d = cfg_.hidden_size, kv = cfg_.num_kv_heads * cfg_.head_dim, H = cfg_.num_heads;
    embeddings_ = take_fp32("model.embeddings.weight", {cfg_.vocab_size, d});
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const std::string p = fmt::format("model.layers.{}.", l);
      Block b;
      b.attn_norm = take_fp32(p + "attn_norm.weight", {d});
      b.mlp_norm = take_fp32(p + "mlp_norm.weight", {d});
      AttentionWeights& a = b.attn;
      a.q_proj = take_mm(p + "attn.q_proj.weight", {d, d});
      if (cfg_.use_k_shift) {
        a.k_proj = take_mm(p + "attn.k_proj.linear.weight", {kv, d});
        a.k_shift_proj = take_mm(p + "attn.k_proj.shift_proj.weight", {H, d});
      } else {
        a.k_proj = take_mm(p + "attn.k_proj.weight", {kv, d});
      }
      if (cfg_.use_v_shift) {
        a.v_proj = take_mm(p + "attn.v_proj.linear.weight", {kv, d});
        a.v_shift_proj = take_mm(p + "attn.v_proj.shift_proj.weight", {H, d});
      } else {
        a.v_proj = take_mm(p + "attn.v_proj.weight", {kv, d});
      }
      a.o_proj = take_mm(p + "attn.o_proj.weight", {d, d});
      if (cfg_.fgate_type == "full") {
        a.fgate_weight = take_mm(p + "attn.fgate_proj.weight", {H, d});
        a.fgate_bias = take_mm(p + "attn.fgate_proj.bias", {H});
      } else if (cfg_.fgate_type == "bias_only" || cfg_.fgate_type == "fixed") {
        a.fgate_bias = take_fp32(p + "attn.fgate_bias", {H});
      }
      if (options_.fgate_bias_shift != 0.0 && a.fgate_bias.defined())  // bench pruning's gate levels (model.h)
        a.fgate_bias = (a.fgate_bias.to(at::kFloat) + options_.fgate_bias_shift).to(a.fgate_bias.scalar_type());
      if (cfg_.use_output_gate) a.ogate_proj = take_mm(p + "attn.ogate_proj.weight", {d, d});
      if (cfg_.use_output_norm) a.output_norm = take_fp32(p + "attn.output_norm.weight", {d});
      if (cfg_.qk_norm) {
        const int64_t n = cfg_.qk_norm_share_param_across_head ? cfg_.head_dim : d;
        a.q_norm = take_fp32(p + "attn.q_norm.weight", {n});
        a.k_norm = take_fp32(p + "attn.k_norm.weight", {n});
        if (cfg_.qk_norm_share_param_across_head) {  // one [head_dim] weight for every head
          a.q_norm = a.q_norm.repeat({H});
          a.k_norm = a.k_norm.repeat({H});
        }
      }
      if (fused_decode_config()) concat_input_projections(a);
      b.mlp_gate_proj = take_mm(p + "mlp.gate_proj.weight", {2 * cfg_.intermediate_size, d});
      b.mlp_down_proj = take_mm(p + "mlp.down_proj.weight", {d, cfg_.intermediate_size});
      blocks_.push_back(std::move(b));
    }
    final_norm_ = take_fp32("model.norm.weight", {d});
    lm_head_ = cfg_.tie_word_embeddings ? embeddings_.to(loader_.compute)
                                        : take_mm("lm_head.weight", {cfg_.vocab_size, d});
    if (cfg_.use_rope) {
      // inv_freq_i = base^(-2i/D), in fp32 as the official RotaryEmbedding.
      inv_freq_ = at::pow(cfg_.rope_base, at::arange(0, cfg_.head_dim, 2, at::TensorOptions().dtype(at::kFloat)) /
                                              static_cast<double>(cfg_.head_dim))
                      .reciprocal()
                      .to(loader_.device);
    }
  }

  // Whether decode steps on slots take the fused path (kernels/fox_decode.h): on a GPU, one kv
  // head per head, head size 64 or 128, a full forget gate or none.
  bool fused_decode_config() const {
    return loader_.device.is_cuda() && fox_decode_prep_enabled() && cfg_.num_kv_heads == cfg_.num_heads &&
           (cfg_.head_dim == 64 || cfg_.head_dim == 128) && (cfg_.fgate_type == "full" || cfg_.fgate_type == "none");
  }

  // One [N, hidden] weight for q, k, v, the output gate, the shift and forget-gate logits, in
  // that order (the wide slices first: 16-byte aligned rows); the separate weights become views
  // of it. Decode steps and the prefill (project_inputs) use it whole.
  void concat_input_projections(AttentionWeights& a) {
    std::vector<at::Tensor*> parts{&a.q_proj, &a.k_proj, &a.v_proj};
    std::vector<int64_t*> offsets{&a.q_off, &a.k_off, &a.v_off};
    auto add = [&](at::Tensor& w, int64_t& off) {
      if (!w.defined()) return;
      parts.push_back(&w);
      offsets.push_back(&off);
    };
    add(a.ogate_proj, a.og_off);
    add(a.k_shift_proj, a.ks_off);
    add(a.v_shift_proj, a.vs_off);
    if (cfg_.fgate_type == "full") add(a.fgate_weight, a.f_off);
    std::vector<at::Tensor> ws;
    for (at::Tensor* w : parts) ws.push_back(*w);
    a.in_proj = at::cat(ws, 0);
    int64_t row = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const int64_t n = parts[i]->size(0);
      *parts[i] = a.in_proj.narrow(0, row, n);
      *offsets[i] = row;
      row += n;
    }
    if (a.f_off >= 0) {
      a.in_bias = at::zeros({row}, a.in_proj.options());
      a.in_bias.narrow(0, a.f_off, cfg_.num_heads).copy_(a.fgate_bias);
    }
  }

  void fill_info(const Checkpoint& ckpt) {
    info_ = basic_model_info(ckpt, cfg_.variant, cfg_.hidden_size, cfg_.num_layers, cfg_.vocab_size);
    auto on = [](bool b) { return std::string(b ? "true" : "false"); };
    info_.settings = {{"num_heads", std::to_string(cfg_.num_heads)},
                      {"num_kv_heads", std::to_string(cfg_.num_kv_heads)},
                      {"head_dim", std::to_string(cfg_.head_dim)},
                      {"intermediate_size", std::to_string(cfg_.intermediate_size)},
                      {"fgate_type", cfg_.fgate_type},
                      {"use_rope", on(cfg_.use_rope)},
                      {"use_k_shift", on(cfg_.use_k_shift)},
                      {"use_v_shift", on(cfg_.use_v_shift)},
                      {"qk_norm", on(cfg_.qk_norm)},
                      {"use_output_gate", on(cfg_.use_output_gate)},
                      {"use_output_norm", on(cfg_.use_output_norm)}};
    if (cfg_.window_size > 0) info_.settings.emplace_back("window_size", std::to_string(cfg_.window_size));
    if (cfg_.has_log_pruning_tolerance)
      info_.settings.emplace_back("log_pruning_tolerance", fmt::format("{}", cfg_.log_pruning_tolerance));
  }

  // The shift state after a prefill of proj [B, T, kv]: its last token (zero where padded), a copy:
  // a view would keep the whole fused projection alive with it.
  static at::Tensor next_shift_state(const at::Tensor& proj, const at::Tensor& pad_mask) {
    const int64_t T = proj.size(1);
    at::Tensor last = proj.select(1, T - 1);
    if (pad_mask.defined()) last = last.masked_fill(pad_mask.select(1, T - 1).unsqueeze(-1), 0.0);
    return last.clone(at::MemoryFormat::Contiguous);
  }

  // The data-dependent token shift (FoX Pro) of a k or v projection `out` [B, T, kv]:
  //   out_t = alpha_t * proj_{t-1} + (1 - alpha_t) * proj_t,  alpha = sigmoid(alpha_logit), per head.
  // The previous projection of the first token is the state's (zero at the sequence start,
  // and zero for left padding), computed in fp32 and cast back as the official kernel. `out`
  // and `alpha_logit` may be column slices of the fused input projection.
  // head_major: the fused kernel writes a [B, T, H, Dh] view of a head-major buffer (the layout the
  // attention kernel reads fastest); the torch path returns [B, T, kv] as always.
  at::Tensor shift_mix(const at::Tensor& out_in, const at::Tensor& alpha_logit, at::Tensor* shift_state,
                       const at::Tensor& pad_mask, bool head_major = false) {
    const int64_t B = out_in.size(0), T = out_in.size(1), H = cfg_.num_heads;
    if (out_in.is_cuda()) {  // one fused kernel for mask, sigmoid, shift and mix
      at::Tensor prev = (shift_state && shift_state->defined()) ? *shift_state : at::Tensor();
      at::Tensor mixed;
      {
        StageTimer timer("token_shift");
        mixed = fused_token_shift(out_in, alpha_logit, prev, pad_mask, head_major);
      }
      if (mixed.defined()) {
        if (shift_state) *shift_state = next_shift_state(out_in, pad_mask);
        return mixed;
      }
    }
    at::Tensor out = pad_mask.defined() ? out_in.masked_fill(pad_mask.unsqueeze(-1), 0.0) : out_in;
    at::Tensor alpha = at::sigmoid(alpha_logit.to(at::kFloat)).unsqueeze(-1);  // [B, T, H, 1]
    at::Tensor cur = out.to(at::kFloat).reshape({B, T, H, -1});
    at::Tensor first_prev = (shift_state && shift_state->defined()) ? shift_state->to(at::kFloat).reshape({B, 1, H, -1})
                                                                    : at::zeros({B, 1, H, cur.size(3)}, cur.options());
    at::Tensor prev = at::cat({first_prev, cur.slice(1, 0, T - 1)}, 1);
    at::Tensor mixed = (alpha * prev + (1.0 - alpha) * cur).to(out.scalar_type()).view({B, T, -1});
    if (shift_state) *shift_state = next_shift_state(out_in, pad_mask);
    return mixed;
  }

  // Every input projection of the attention block, from h [B, T, hidden]. On a GPU with the
  // concatenated weight (in_proj), one matmul: the parts are column slices of its output, which
  // the glue kernels and the attention kernel read in place through their row stride (one read of
  // h instead of seven, and no narrow matmuls for the shift and gate logits). Otherwise one
  // matmul each; the output gate's is then left to attention_output.
  struct InputProjections {
    at::Tensor q, k, v, k_shift_logit, v_shift_logit, fgate_logit, ogate;
  };
  InputProjections project_inputs(const AttentionWeights& a, const at::Tensor& h) {
    InputProjections p;
    const bool full_gate = cfg_.fgate_type == "full";
    if (a.in_proj.defined() && h.is_cuda() && fused_projection_on()) {
      const at::Tensor all = a.in_bias.defined() ? foxeval::linear(h, a.in_proj, a.in_bias) : foxeval::linear(h, a.in_proj);
      auto part = [&](int64_t off, const at::Tensor& w) { return all.narrow(-1, off, w.size(0)); };
      p.q = part(a.q_off, a.q_proj);
      p.k = part(a.k_off, a.k_proj);
      p.v = part(a.v_off, a.v_proj);
      if (cfg_.use_k_shift) p.k_shift_logit = part(a.ks_off, a.k_shift_proj);
      if (cfg_.use_v_shift) p.v_shift_logit = part(a.vs_off, a.v_shift_proj);
      if (full_gate) p.fgate_logit = part(a.f_off, a.fgate_weight);
      if (cfg_.use_output_gate) p.ogate = part(a.og_off, a.ogate_proj);
      return p;
    }
    p.q = foxeval::linear(h, a.q_proj);
    p.k = foxeval::linear(h, a.k_proj);
    if (cfg_.use_k_shift) p.k_shift_logit = foxeval::linear(h, a.k_shift_proj);
    p.v = foxeval::linear(h, a.v_proj);
    if (cfg_.use_v_shift) p.v_shift_logit = foxeval::linear(h, a.v_shift_proj);
    if (full_gate) p.fgate_logit = foxeval::linear(h, a.fgate_weight, a.fgate_bias);
    return p;
  }

  // A GPU prefill's token shift, qk-norm and rotary in one kernel (kernels/fox_prefill_prep.h), the
  // same bits as the separate kernels: sets q, k, v ([B, T, H, Dh] over head-major buffers) and the
  // shift states, and returns true; false (nothing changed) where the kernel does not apply.
  bool prepare_qkv(const AttentionWeights& a, const InputProjections& in, const at::Tensor& positions,
                   const at::Tensor& pad_mask, LayerState* ls, at::Tensor& q, at::Tensor& k, at::Tensor& v) {
    const bool any = cfg_.qk_norm || cfg_.use_k_shift || cfg_.use_v_shift;
    if (!any || !prefill_prep_on() || !in.q.is_cuda() || cfg_.num_kv_heads != cfg_.num_heads) return false;
    FoxPrefillPrep p;
    p.q = in.q;
    p.k = in.k;
    p.v = in.v;
    if (cfg_.use_k_shift) {
      p.k_shift_logit = in.k_shift_logit;
      if (ls && ls->k_shift.defined()) p.k_prev = ls->k_shift;
    }
    if (cfg_.use_v_shift) {
      p.v_shift_logit = in.v_shift_logit;
      if (ls && ls->v_shift.defined()) p.v_prev = ls->v_shift;
    }
    p.pad_mask = pad_mask;
    if (cfg_.qk_norm) {  // the official GroupNorm default eps
      p.q_norm = a.q_norm;
      p.k_norm = a.k_norm;
      p.norm_eps = 1e-5;
    }
    if (cfg_.use_rope) {
      p.positions = positions;
      p.inv_freq = inv_freq_;
    }
    p.heads = cfg_.num_heads;
    FoxPrefillQKV r;
    {
      StageTimer timer("qkv_prep");
      r = fox_prefill_prep(p);
    }
    if (!r.q.defined()) return false;
    if (ls && cfg_.use_k_shift) ls->k_shift = next_shift_state(in.k, pad_mask);
    if (ls && cfg_.use_v_shift) ls->v_shift = next_shift_state(in.v, pad_mask);
    q = r.q;
    k = r.k;
    v = r.v;
    return true;
  }

  // Adaptive computation pruning (config log_pruning_tolerance, as the official layer): a key
  // block may be skipped when its decay bias c_i - c_j is below
  //   -(2 * bound + log(Tk)) + log_pruning_tolerance,  bound >= |scale * q.k| for every pair,
  // so the skipped softmax mass is at most Tk * exp(2 bound + threshold) <= exp(tolerance).
  // With per-head qk-norm the bound comes from the norm weights; otherwise from the largest
  // query and key norms. Returns [B, H] float32.
  // With kv_len (decoding slots) Tk is each row's own length, not the capacity.
  at::Tensor pruning_threshold(const AttentionWeights& a, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& kv_len = at::Tensor()) {
    const int64_t B = q.size(0), H = cfg_.num_heads, D = cfg_.head_dim, Tk = k.size(2);
    at::Tensor bound;
    if (cfg_.qk_norm) {
      at::Tensor wq = a.q_norm.abs().view({H, D}).amax(-1), wk = a.k_norm.abs().view({H, D}).amax(-1);
      bound = (wq * wk * std::sqrt(static_cast<double>(D))).view({1, H}).expand({B, H});
    } else {
      at::Tensor kk = k.to(at::kFloat);
      if (cfg_.num_kv_heads != H) kk = kk.repeat_interleave(H / cfg_.num_kv_heads, 1);
      at::Tensor max_q = at::linalg_vector_norm(q.to(at::kFloat), 2, {-1}).amax(-1);   // [B, H]
      at::Tensor max_k = at::linalg_vector_norm(kk, 2, {-1}).amax(-1);
      bound = max_q * max_k / std::sqrt(static_cast<double>(D));
    }
    if (kv_len.defined()) {
      at::Tensor log_tk = kv_len.to(at::kFloat).log().view({B, 1});
      return (-(2.0 * bound + log_tk) + cfg_.log_pruning_tolerance).to(at::kFloat).contiguous();
    }
    return (-(2.0 * bound + std::log(static_cast<double>(Tk))) + cfg_.log_pruning_tolerance).to(at::kFloat).contiguous();
  }

  // log f [B, T, H] fp32 from the forget gate's logits (fgate_type full) or its constant bias.
  at::Tensor log_fgate(const AttentionWeights& a, const at::Tensor& h, const at::Tensor& fgate_logit) {
    const int64_t B = h.size(0), T = h.size(1), H = cfg_.num_heads;
    if (cfg_.fgate_type == "full") return at::log_sigmoid(fgate_logit.to(at::kFloat));
    if (cfg_.fgate_type == "none") return at::zeros({B, T, H}, h.options().dtype(at::kFloat));
    return at::log_sigmoid(a.fgate_bias).view({1, 1, H}).expand({B, T, H});  // bias_only, fixed
  }

  // The token shift of a decode step on slots, its state in a slot buffer (updated in place:
  // fixed addresses).
  at::Tensor shift_mix_slot(const at::Tensor& out, const at::Tensor& alpha_logit, at::Tensor& buffer) {
    if (out.is_cuda()) {  // the fused kernel reads the state buffer and the new state is written in place
      at::Tensor mixed = fused_token_shift(out, alpha_logit, buffer, at::Tensor());
      if (mixed.defined()) {
        buffer.copy_(out.select(1, 0));
        return mixed;
      }
    }
    at::Tensor state = buffer;
    at::Tensor mixed = shift_mix(out, alpha_logit, &state, at::Tensor());
    buffer.copy_(state);
    return mixed;
  }

  // A decode step on slots with one matmul for every input projection and one kernel for the
  // glue up to the attention (kernels/fox_decode.h); undefined where that kernel does not apply.
  at::Tensor attention_slots(const AttentionWeights& a, const at::Tensor& h, SlotLayer& sl, const SlotStep& step) {
    if (!a.in_proj.defined()) return at::Tensor();
    FoxDecodePrep p;
    p.q_off = a.q_off;
    p.k_off = a.k_off;
    p.v_off = a.v_off;
    p.ks_off = cfg_.use_k_shift ? a.ks_off : -1;
    p.vs_off = cfg_.use_v_shift ? a.vs_off : -1;
    p.f_off = a.f_off;
    p.heads = cfg_.num_heads;
    p.head_dim = cfg_.head_dim;
    if (cfg_.qk_norm) {
      p.q_norm = a.q_norm;
      p.k_norm = a.k_norm;
    }
    p.inv_freq = cfg_.use_rope ? inv_freq_ : at::Tensor();
    p.len = step.slots->len;
    p.ring = step.slots->ring;
    p.keys = sl.keys;
    p.values = sl.values;
    p.cum_log_fgate = sl.cum_log_fgate;
    p.k_state = sl.k_shift;
    p.v_state = sl.v_shift;
    p.og_off = cfg_.use_output_gate ? a.og_off : -1;
    p.og_dim = cfg_.use_output_gate ? a.ogate_proj.size(0) : 0;
    p.proj = a.in_bias.defined() ? foxeval::linear(h, a.in_proj, a.in_bias) : foxeval::linear(h, a.in_proj);
    if (!fox_decode_prep_supports(p))  // the load checked the config (fused_decode_config)
      throw Error("FoX model: internal: the fused decode step does not take this layer's arguments");
    auto [q, g] = fox_decode_prep(p);
    AttentionArgs args;
    args.q = q;
    args.k = sl.keys;
    args.v = sl.values;
    args.cum_log_fgate = sl.cum_log_fgate;
    args.kv_len = step.kv_len;
    return attend(a, h, args, g);
  }

  at::Tensor attention(int64_t layer, const AttentionWeights& a, const at::Tensor& h, const at::Tensor& positions,
                       const at::Tensor& seq_start, LayerState* ls, SlotLayer* sl, const SlotStep* step) {
    if (sl && h.is_cuda()) {
      at::Tensor out = attention_slots(a, h, *sl, *step);
      if (out.defined()) return out;
    }
    const int64_t B = h.size(0), T = h.size(1), H = cfg_.num_heads, Hkv = cfg_.num_kv_heads, D = cfg_.head_dim;
    // Left padding: positions before seq_start are masked out of the token shift.
    at::Tensor pad_mask;
    if (seq_start.defined()) pad_mask = positions < 0;
    const InputProjections in = project_inputs(a, h);
    at::Tensor q = in.q, k = in.k, v = in.v;
    // A GPU prefill makes q, k and v in one kernel (shift, qk-norm, rotary); `prepared` says so.
    const bool prepared = !sl && prepare_qkv(a, in, positions, pad_mask, ls, q, k, v);
    if (sl) {
      if (cfg_.use_k_shift) k = shift_mix_slot(k, in.k_shift_logit, sl->k_shift);
      if (cfg_.use_v_shift) v = shift_mix_slot(v, in.v_shift_logit, sl->v_shift);
    } else if (!prepared) {
      // q, k and v reach the attention kernel head-major where the kernel that makes them last can
      // write it so (k's last is the qk-norm when there is one); one KV head per head only.
      const bool hm = Hkv == H;
      if (cfg_.use_k_shift) k = shift_mix(k, in.k_shift_logit, ls ? &ls->k_shift : nullptr, pad_mask, hm && !cfg_.qk_norm);
      if (cfg_.use_v_shift) v = shift_mix(v, in.v_shift_logit, ls ? &ls->v_shift : nullptr, pad_mask, hm);
    }
    if (cfg_.qk_norm && !prepared) {
      StageTimer timer("qk_norm");
      const bool hm = !sl;  // a decode step's single token has no layout to choose
      // the official GroupNorm default eps
      q = group_rms_norm(q, a.q_norm, H, 1e-5, q.scalar_type(), hm);
      k = group_rms_norm(k, a.k_norm, H, 1e-5, k.scalar_type(), hm && Hkv == H);
    }
    q = q.view({B, T, H, D});
    k = k.view({B, T, Hkv, D});
    v = v.view({B, T, Hkv, D});
    if (cfg_.use_rope && !prepared) {
      StageTimer timer("rotary");
      q = rotary(q, positions, inv_freq_);
      k = rotary(k, positions, inv_freq_);
    }
    // c_t = cumulative log forget gate, continued from the cache: fp32 throughout.
    // Scan along the last dim: a cumsum over dim 1 of [B, T, H] runs H-wide on the GPU (6 ms at 16k).
    // Without a forget gate a prefill with no cache needs no c at all (attend drops it).
    const bool no_c = cfg_.fgate_type == "none" && !sl && !ls;
    at::Tensor cum;
    if (!no_c) {
      StageTimer timer("forget_gate");
      // On the GPU one scan kernel (kernels/fgate_scan.h) unless the capture needs log f itself.
      if (T > 1 && !capture_ && cfg_.fgate_type == "full" && h.is_cuda() && prefill_prep_on())
        cum = fused_log_fgate_cumsum(in.fgate_logit);
      if (!cum.defined()) {
        const at::Tensor lf = log_fgate(a, h, in.fgate_logit);  // [B, T, H] fp32
        if (capture_ && !sl) capture(layer, lf, q, k);
        cum = T == 1 ? lf.reshape({B, H, 1})                          // [B, 1, H] is [B, H, 1] in memory
                     : at::cumsum(lf.transpose(1, 2).contiguous(), -1);  // [B, H, T]
      }
    } else if (capture_) {
      capture(layer, at::Tensor(), q, k);
    }
    AttentionArgs args;
    args.q = q.transpose(1, 2);
    if (sl) {  // one token per row, written at its own position of the fixed-capacity caches
      // c continues from the row's last key (an empty row, only ever idle, reads its first entry).
      cum = cum + sl->cum_log_fgate.view(-1).index_select(0, step->prev_c).view({B, H, 1});
      sl->keys.view({-1, D}).index_copy_(0, step->kv_rows, k.reshape({B * Hkv, D}));
      sl->values.view({-1, D}).index_copy_(0, step->kv_rows, v.reshape({B * Hkv, D}));
      sl->cum_log_fgate.view(-1).index_copy_(0, step->c_rows, cum.view(-1));
      args.k = sl->keys;
      args.v = sl->values;
      args.cum_log_fgate = sl->cum_log_fgate;
      args.kv_len = step->kv_len;
    } else if (ls) {
      if (ls->cum_log_fgate.length() > 0) cum = cum + ls->cum_log_fgate.last().unsqueeze(-1);
      forget_outside_window(*ls);
      args.k = ls->keys.append(k.transpose(1, 2), 2);
      args.v = ls->values.append(v.transpose(1, 2), 2);
      args.cum_log_fgate = ls->cum_log_fgate.append(cum.contiguous(), 2);
    } else {
      args.k = k.transpose(1, 2);
      args.v = v.transpose(1, 2);
      if (cum.defined()) args.cum_log_fgate = cum.contiguous();
    }
    // Key indices start at the first key the cache still holds; so does the padding bound.
    args.seq_start = seq_start.defined() && ls && ls->dropped > 0 ? seq_start - ls->dropped : seq_start;
    if (!sl) args.window = cfg_.window_size;  // a slot step attends to its ring: exactly the window
    return attend(a, h, args, in.ogate);
  }

  // A sliding window's cache forgets the keys no query from here on sees: all but the last W - 1,
  // once it holds window_keep_limit of them (every ~W tokens, so O(1) a token).
  void forget_outside_window(LayerState& ls) {
    const int64_t W = cfg_.window_size;
    if (W <= 0 || ls.keys.length() < window_keep_limit(W)) return;
    const int64_t n = ls.keys.length() - std::max<int64_t>(W - 1, 1);  // c continues from the last key
    ls.keys.drop_front(n);
    ls.values.drop_front(n);
    ls.cum_log_fgate.drop_front(n);
    ls.dropped += n;
  }

  // Hands the capture (model.h) this layer's log forget gate and, for its chosen head, q and k as
  // the attention reads them ([B, T, H, D] / [B, T, Hkv, D]). The tensors are the forward's own.
  void capture(int64_t layer, const at::Tensor& lf, const at::Tensor& q, const at::Tensor& k) {
    if (cfg_.fgate_type != "none") capture_->log_decay(layer, lf);
    const auto [ql, qh] = capture_->qk_head();
    if (ql != layer || qh < 0 || qh >= cfg_.num_heads) return;
    const int64_t kh = qh / (cfg_.num_heads / cfg_.num_kv_heads);
    capture_->qk(q.select(2, qh).to(at::kFloat), k.select(2, kh).to(at::kFloat));
  }

  // The tail both paths share: the attention over args (q, k, v, c and lengths set), then the
  // output norm and gate and o_proj (attention_output).
  at::Tensor attend(const AttentionWeights& a, const at::Tensor& h, AttentionArgs& args, const at::Tensor& g) {
    if (cfg_.fgate_type == "none") args.cum_log_fgate = at::Tensor();  // plain causal attention
    args.scale = 1.0 / std::sqrt(static_cast<double>(cfg_.head_dim));
    if (cfg_.has_log_pruning_tolerance && cfg_.fgate_type != "none")
      args.adaptive_threshold = pruning_threshold(a, args.q, args.k, args.kv_len);
    if (args.adaptive_threshold.defined() && args.q.is_cuda() && pruning_counts_.defined())
      args.pruning_counts = pruning_counts_;  // the kernels add to it on the device (pruning_stats reads it)
    at::Tensor o;
    {
      StageTimer timer("attention");
      o = forgetting_attention(args);
    }
    o = o.transpose(1, 2).reshape({h.size(0), h.size(1), cfg_.num_heads * cfg_.head_dim});
    return attention_output(a, h, o, g);
  }

  // The output norm and gate, then o_proj. The gate's projection is `g` where given (the fused
  // decode step made it), else computed from h.
  at::Tensor attention_output(const AttentionWeights& a, const at::Tensor& h, at::Tensor o, at::Tensor g) {
    const int64_t H = cfg_.num_heads;
    if (cfg_.use_output_gate && !g.defined()) g = foxeval::linear(h, a.ogate_proj);
    std::optional<StageTimer> timer(std::in_place, "output_norm_gate");
    if (cfg_.use_output_norm) {
      if (cfg_.use_output_gate) {  // fused RMSNorm * sigmoid(gate), in fp32
        at::Tensor fused = o.is_cuda() ? fused_group_rms_norm(o, a.output_norm, H, cfg_.norm_eps, loader_.compute, g)
                                       : at::Tensor();
        if (fused.defined()) {
          o = fused;
        } else {
          o = (group_rms_norm(o, a.output_norm, H, cfg_.norm_eps, at::kFloat) * at::sigmoid(g.to(at::kFloat)))
                  .to(loader_.compute);
        }
      } else {
        o = group_rms_norm(o, a.output_norm, H, cfg_.norm_eps, loader_.compute);
      }
    } else if (cfg_.use_output_gate) {
      at::Tensor gf = g.to(at::kFloat);
      at::Tensor gate = cfg_.ogate_act == "sigmoid" ? at::sigmoid(gf) : at::silu(gf);
      o = (gate * o.to(at::kFloat)).to(loader_.compute);
    }
    timer.reset();
    return foxeval::linear(o, a.o_proj);
  }

  // SwiGLU (or GLU) MLP: down(act(gate) * up), the product in fp32 as the official kernel.
  at::Tensor mlp(const Block& b, const at::Tensor& h) {
    if (h.is_cuda() && h.numel() == h.size(-1)) {  // one row (a batch-1 decode step): the gate_up GEMV
      // with the gated unit in its epilogue, the same bits as the two kernels below (kernels/gemv.h)
      const bool silu = cfg_.hidden_act == "swish";
      at::Tensor p = small_gemv_glu(h.to(b.mlp_gate_proj.scalar_type()), b.mlp_gate_proj, silu);
      if (p.defined()) return foxeval::linear(p, b.mlp_down_proj);
    }
    if (loader_.compute == at::kBFloat16 && glu_gemm_supports(h, b.mlp_gate_proj)) {  // prefill: the gated unit
      // in the gate_up GEMM's epilogue (kernels/glu_gemm.h); the projection itself never goes to memory
      at::Tensor p;
      {
        StageTimer timer(stage_timing_enabled() ? fmt::format("linear {}->{} +glu", b.mlp_gate_proj.size(1),
                                                              b.mlp_gate_proj.size(0))
                                                : std::string());
        p = glu_gemm(h, b.mlp_gate_proj, cfg_.hidden_act == "swish");
      }
      if (p.defined()) return foxeval::linear(p, b.mlp_down_proj);
    }
    at::Tensor y = foxeval::linear(h, b.mlp_gate_proj);
    if (y.is_cuda()) {
      at::Tensor p;
      {
        StageTimer timer("swiglu");
        p = fused_swiglu(y, cfg_.hidden_act == "swish", loader_.compute);
      }
      if (p.defined()) return foxeval::linear(p, b.mlp_down_proj);
    }
    auto parts = y.chunk(2, -1);
    at::Tensor gate = parts[0].to(at::kFloat), up = parts[1].to(at::kFloat);
    at::Tensor act = cfg_.hidden_act == "swish" ? at::silu(gate) : at::sigmoid(gate);
    return foxeval::linear((act * up).to(loader_.compute), b.mlp_down_proj);
  }

 public:
  // The device counts (kernels/forgetting_attention.h pruning_counts), read once: a synchronization.
  PruningStats pruning_stats() const override {
    PruningStats s;
    s.on = cfg_.has_log_pruning_tolerance && cfg_.fgate_type != "none";
    if (!s.on) return s;
    s.log_tolerance = cfg_.log_pruning_tolerance;
    if (pruning_counts_.defined()) {
      const at::Tensor n = pruning_counts_.to(at::kCPU);
      const int64_t* c = n.data_ptr<int64_t>();
      s.key_blocks_skipped = c[0];
      s.key_blocks = c[1];
      s.decode_keys_skipped = c[2];
      s.decode_keys = c[3];
    }
    return s;
  }

 private:
  FoxConfig cfg_;
  RunOptions options_;
  Loader loader_;
  ModelInfo info_;
  at::Tensor embeddings_, final_norm_, lm_head_, inv_freq_;
  std::vector<Block> blocks_;
  // Adaptive-pruning counts {prefill blocks skipped, in range, decode keys skipped, in range}, made
  // once here (a decode step in a CUDA graph keeps its address) on a CUDA device only.
  at::Tensor pruning_counts_ =
      loader_.device.is_cuda() ? at::zeros({4}, at::TensorOptions().device(loader_.device).dtype(at::kLong)) : at::Tensor();
};

}  // namespace

std::unique_ptr<CausalLM> make_forgetting_transformer(Checkpoint& checkpoint, const RunOptions& options) {
  return std::make_unique<ForgettingTransformer>(checkpoint, options,
                                                 FoxConfig::parse_forgetting_transformer(checkpoint.config()));
}

std::unique_ptr<CausalLM> make_transformer(Checkpoint& checkpoint, const RunOptions& options) {
  return std::make_unique<ForgettingTransformer>(checkpoint, options, FoxConfig::parse_transformer(checkpoint.config()));
}

// config.json model_type -> this family (models/registry.h).
const FamilyRegistrar registered_forgetting_transformer({"forgetting_transformer-project_fox", make_forgetting_transformer});
const FamilyRegistrar registered_transformer({"transformer-project_fox", make_transformer});

}  // namespace foxeval
