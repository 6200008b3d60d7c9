// Samba as the FoX paper's baseline (forgetting-transformer 883f260, model/samba, with fla
// 1c5937ee's MambaMixer). Per layer l, on the fp32 residual stream x:
//   h = RMSNorm(x); x += mixer(h); x += SwiGLU(RMSNorm(x))
// mixer: even l (attn.layers null) Mamba-1, odd l sliding-window attention:
//   Mamba-1: [u | z] = in_proj(h); u = silu(causal_conv(u)); [r | B | C] = x_proj(u);
//            dt = softplus(dt_proj(r) + dt_bias); A = -exp(A_log);
//            h_t = exp(dt A) h_{t-1} + dt B u; y = (h_t . C + D u) * silu(z); out_proj(y)
//            (kernels/selective_scan.h)
//   attention: q, k, v projections, RoPE (rope_base) on q and k, flash-attn's window (query i sees
//            keys i - W + 1 .. i), grouped KV heads, o_proj.
// Numerics: fp32 is the official pure-PyTorch path (the reference fixtures). Under bf16 the
// matmuls run in bf16 (autocast); the Mamba side follows the mamba_ssm / causal_conv1d kernels
// the official GPU runs use: conv summed in fp32 from bf16 inputs with fp32 weights, SiLU in
// fp32, its output, B, C, z and the dt projection in bf16, softplus(dt + dt_bias) and the scan in
// fp32, y rounded to bf16.
// Left padding (seq_start) is exactly absent: padded mixer inputs are zeroed before the conv and
// the scan, padded keys get no weight, and RoPE positions count from each row's first real token.
#include "models/samba/samba_model.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>

#include <algorithm>

#include "data/errors.h"
#include "kernels/causal_conv.h"
#include "kernels/forgetting_attention.h"
#include "kernels/selective_scan.h"
#include "models/layers/layers.h"
#include "models/layers/rotary.h"
#include "models/layers/recurrent_lm.h"
#include "models/layers/recurrent_ops.h"
#include "models/registry.h"
#include "models/samba/samba_config.h"
#include "models/samba/samba_state.h"
#include "models/samba/window_attention.h"
#include "models/stage_timer.h"

namespace foxeval {
namespace samba {

void SambaSlots::load(int64_t slot, DecodeState& prefilled) {
  auto* st = dynamic_cast<SambaState*>(&prefilled);
  if (!st) throw Error("Samba slots: a decoding state from another family");
  if (st->batch != 1 || st->seq_start.defined()) throw Error("Samba slots: load takes a batch-1 state without padding");
  if (slot < 0 || slot >= S) throw Error(fmt::format("Samba slots: no slot {} of {}", slot, S));
  for (size_t l = 0; l < layers.size(); ++l) {
    auto dst = layers[l].tensors(), src = st->layers[l].tensors();
    for (size_t k = 0; k < dst.size(); ++k) {
      if (!dst[k]->defined()) continue;
      at::Tensor row = dst[k]->select(0, slot);
      if (src[k]->defined())
        row.copy_(src[k]->select(0, 0));
      else
        row.zero_();
    }
  }
  len.select(0, slot).fill_(st->consumed);
}

void SambaSlots::clear(int64_t slot) { len.select(0, slot).fill_(0); }

namespace {

const char* kFamily = "Samba";

struct MambaWeights {
  at::Tensor in_proj, in_proj_bias, x_proj, dt_proj, out_proj, out_proj_bias;  // compute dtype
  at::Tensor conv_weight, conv_bias;                                           // fp32 [E, K], [E]
  at::Tensor dt_bias, A, D;                                                    // fp32 [E], [E, N] = -exp(A_log), [E]
};

struct AttentionWeights {
  at::Tensor q_proj, k_proj, v_proj, o_proj;
};

struct Layer {
  bool attention = false;
  int64_t mamba_index = -1;         // the Mamba layer's index among Mamba layers (inspect's layer)
  at::Tensor mixer_norm, mlp_norm;  // fp32
  MambaWeights mamba;
  AttentionWeights attn;
  at::Tensor gate_proj, down_proj;
};

// Where a forward runs: a batch with a shared token count (state, or none), or decoding slots.
struct Run {
  std::vector<LayerState>* layers = nullptr;  // null: no state (fresh rows, nothing kept)
  int64_t consumed = 0;
  at::Tensor seq_start;         // [B] or undefined
  at::Tensor real;              // [B, T] bool real-token mask, undefined when nothing is padded
  at::Tensor positions;         // [B, T] int64 RoPE positions
  SambaSlots* slots = nullptr;  // decoding slots (T = 1)
};

class SambaModel : public CausalLM {
 public:
  SambaModel(Checkpoint& ckpt, const RunOptions& options)
      : cfg_(SambaConfig::parse(ckpt.config())),
        options_(options),
        loader_(make_loader(ckpt, options)),
        segment_(recurrent::segment_length(recurrent::kSegment)) {
    load(ckpt);
  }

  const ModelInfo& info() const override { return info_; }
  const RunOptions& options() const override { return options_; }
  const at::Tensor& lm_head() const override { return lm_head_; }

  DecayInfo decay_info() const override {
    DecayInfo d;
    d.kind = "ssm_decay";
    d.what = fmt::format(
        "Mamba-1 state decay a_t = exp(dt_t[e] * A[e, n]) per channel e and state n (dt = softplus(dt_proj(x_proj(u)) "
        "+ "
        "dt_bias), A = -exp(A_log)), the {} Mamba layers only, each summarised over its {} x {} (channel, state) "
        "decays; "
        "the attention layers have a hard window of {} tokens instead",
        mamba_layers_, cfg_.intermediate_size, cfg_.state_size, cfg_.window_size);
    d.layers = mamba_layers_;
    d.heads = 1;
    d.channels = cfg_.intermediate_size * cfg_.state_size;
    return d;
  }

  std::unique_ptr<DecodeState> new_state(int64_t batch, const at::Tensor& seq_start) override {
    at::Tensor start = seq_start.defined() ? seq_start.to(loader_.device, at::kLong) : at::Tensor();
    return std::make_unique<SambaState>(batch, start, cfg_.num_layers);
  }

  at::Tensor forward(const at::Tensor& input_ids, DecodeState* base) override {
    SambaState* state = nullptr;
    if (base) {
      state = dynamic_cast<SambaState*>(base);
      if (!state) throw Error("Samba model: the decoding state belongs to another family");
      if (state->batch != input_ids.size(0))
        throw Error(fmt::format("Samba model: input batch {} differs from the decoding state's {}", input_ids.size(0),
                                state->batch));
    }
    at::Tensor ids = input_ids.to(loader_.device, at::kLong);
    const int64_t T = ids.size(1);
    if (T <= segment_) return forward_segment(ids, state);
    // Long inputs a segment at a time, the states carried: memory bounded whatever the length.
    std::unique_ptr<DecodeState> scratch;
    if (!state) {
      scratch = new_state(ids.size(0), at::Tensor());
      state = static_cast<SambaState*>(scratch.get());
    }
    at::Tensor out = at::empty({ids.size(0), T, cfg_.hidden_size}, ids.options().dtype(at::kFloat));
    for (int64_t t0 = 0; t0 < T; t0 += segment_) {
      const int64_t n = std::min(segment_, T - t0);
      out.narrow(1, t0, n).copy_(forward_segment(ids.narrow(1, t0, n), state));
    }
    return out;
  }

  bool has_slots() const override { return true; }

  std::unique_ptr<SlotState> new_slots(int64_t slots, int64_t capacity) override {
    if (slots < 1 || capacity < 1) throw Error(fmt::format("Samba slots: {} slots of {} tokens", slots, capacity));
    auto s = std::make_unique<SambaSlots>();
    s->S = slots;
    s->C = capacity;
    const auto f32 = at::TensorOptions().device(loader_.device).dtype(at::kFloat);
    const auto mm = f32.dtype(loader_.compute), i64 = f32.dtype(at::kLong);
    s->len = at::zeros({slots}, i64);
    const int64_t Hkv = cfg_.num_kv_heads, W = cfg_.window_size;
    if (cfg_.has_attention)
      s->ring_rows =
          ((at::arange(slots, i64).view({slots, 1}) * Hkv + at::arange(Hkv, i64).view({1, Hkv})) * W).view(-1);
    for (const Layer& w : layers_) {
      LayerState st;
      if (w.attention) {
        st.keys = at::zeros({slots, Hkv, W, cfg_.head_dim}, mm);
        st.values = at::zeros({slots, Hkv, W, cfg_.head_dim}, mm);
      } else {
        st.conv = at::zeros({slots, cfg_.conv_kernel - 1, cfg_.intermediate_size}, f32);
        st.ssm = at::zeros({slots, cfg_.intermediate_size, cfg_.state_size}, f32);
      }
      s->layers.push_back(std::move(st));
    }
    return s;
  }

  int64_t slot_bytes(int64_t capacity) const override {
    (void)capacity;  // fixed-size states: the ring holds W tokens whatever the context
    const int64_t elem = at::elementSize(loader_.compute);
    int64_t bytes = 8;
    for (const Layer& w : layers_)
      bytes += w.attention ? 2 * cfg_.num_kv_heads * cfg_.window_size * cfg_.head_dim * elem
                           : 4 * cfg_.intermediate_size * (cfg_.conv_kernel - 1 + cfg_.state_size);
    return bytes;
  }

  at::Tensor decode_slots(const at::Tensor& ids, SlotState& base) override {
    auto* slots = dynamic_cast<SambaSlots*>(&base);
    if (!slots) throw Error("Samba model: decoding slots from another family");
    const int64_t S = slots->S;
    if (ids.dim() != 1 || ids.size(0) != S) throw Error(fmt::format("Samba model: decode_slots takes [{}] ids", S));
    std::vector<LayerState> fixed = slots->layers;  // the buffers every step reads and writes
    Run run;
    run.layers = &slots->layers;
    run.positions = slots->len.view({S, 1});
    run.slots = slots;
    at::Tensor h = blocks(ids.view({S, 1}), run);
    for (size_t l = 0; l < fixed.size(); ++l) {  // states an ATen path replaced go back in place
      auto want = fixed[l].tensors(), got = slots->layers[l].tensors();
      for (size_t k = 0; k < want.size(); ++k) {
        if (!want[k]->defined()) continue;
        if (!got[k]->is_same(*want[k])) want[k]->copy_(*got[k]);
        *got[k] = *want[k];
      }
    }
    slots->len.add_(1);
    return h.view({S, -1});
  }

 private:
  at::Tensor forward_segment(const at::Tensor& ids, SambaState* state) {
    const int64_t B = ids.size(0), T = ids.size(1);
    Run run;
    if (state) {
      run.layers = &state->layers;
      run.consumed = state->consumed;
      run.seq_start = state->seq_start;
      run.real = recurrent::real_token_mask(state->seq_start, state->consumed, T, loader_.device);
    }
    run.positions = at::arange(run.consumed, run.consumed + T, ids.options()).unsqueeze(0).expand({B, T});
    if (run.seq_start.defined()) run.positions = run.positions - run.seq_start.unsqueeze(1);
    at::Tensor h = blocks(ids, run);
    if (state) state->consumed += T;
    return h;
  }

  // The block stack (fla's fused add + norm: the residual stream in fp32, the MLP input in the
  // mixer output's dtype, as RMSNorm(hidden, residual, prenorm=True)).
  at::Tensor blocks(const at::Tensor& ids, const Run& run) {
    at::Tensor x = at::embedding(embeddings_, ids).contiguous();
    if (layers_.empty()) return foxeval::rms_norm(x, norm_f_, cfg_.norm_eps, at::kFloat);
    at::Tensor h = foxeval::rms_norm(x, layers_[0].mixer_norm, cfg_.norm_eps, loader_.compute);
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Layer& w = layers_[l];
      LayerState* ls = run.layers ? &(*run.layers)[l] : nullptr;
      at::Tensor a = w.attention ? attention(w.attn, h, run, ls) : mamba(w, h, run, ls);
      at::Tensor m = recurrent::swiglu_mlp(recurrent::add_rms_norm(x, a, w.mlp_norm, cfg_.norm_eps, a.scalar_type()),
                                           w.gate_proj, w.down_proj);
      const bool last = l + 1 == layers_.size();
      h = recurrent::add_rms_norm(x, m, last ? norm_f_ : layers_[l + 1].mixer_norm, cfg_.norm_eps,
                                  last ? at::kFloat : loader_.compute);
    }
    return h;
  }

  at::Tensor mamba(const Layer& layer, const at::Tensor& h_in, const Run& run, LayerState* ls) {
    const MambaWeights& w = layer.mamba;
    const int64_t B = h_in.size(0), T = h_in.size(1), E = cfg_.intermediate_size, N = cfg_.state_size;
    const int64_t R = cfg_.time_step_rank;
    const at::ScalarType cd = loader_.compute;
    at::Tensor h = recurrent::zero_padding(h_in, run.real);
    at::Tensor proj =
        w.in_proj_bias.defined() ? foxeval::linear(h, w.in_proj, w.in_proj_bias) : foxeval::linear(h, w.in_proj);
    at::Tensor u_in = proj.narrow(-1, 0, E), z = proj.narrow(-1, E, E);
    at::Tensor conv_scratch;
    at::Tensor* conv_state = ls ? &ls->conv : &conv_scratch;
    // u = silu(conv(u_in)) in fp32, rounded to the compute dtype (causal_conv1d_fn's bf16 output); on a
    // GPU one fused pass (kernels/causal_conv.h: the same bits as the ATen form).
    CausalConvSpec spec;
    spec.bias = w.conv_bias;
    spec.real_mask = run.real;
    spec.silu = true;
    spec.round_after = cd;
    spec.out_dtype = cd;
    at::Tensor u =
        u_in.is_cuda() && causal_conv_cuda_supports(u_in, w.conv_weight, conv_state, spec)
            ? causal_conv_cuda(u_in, w.conv_weight, conv_state, spec)
            : at::silu(recurrent::causal_conv1d(u_in, w.conv_weight, w.conv_bias, conv_state, run.real)).to(cd);
    // Padded positions zeroed after the conv too (its bias): the scan's state stays zero there.
    u = recurrent::zero_padding(u, run.real);
    at::Tensor ssm_in = foxeval::linear(u, w.x_proj);  // [B, T, R + 2N]
    at::Tensor dt_rank = ssm_in.narrow(-1, 0, R);
    at::Tensor dt = cd == at::kFloat
                        ? at::softplus(foxeval::linear(dt_rank, w.dt_proj, w.dt_bias))  // dt_proj(r), as the torch path
                        : at::softplus(foxeval::linear(dt_rank, w.dt_proj).to(at::kFloat) + w.dt_bias);
    if (capture_) capture_->log_decay(layer.mamba_index, (dt.unsqueeze(-1) * w.A).view({B, T, 1, E * N}));
    SelectiveScanArgs args{u, dt.contiguous(), w.A, ssm_in.narrow(-1, R, N), ssm_in.narrow(-1, R + N, N), w.D, z};
    at::Tensor ssm_scratch;
    at::Tensor y;
    {
      StageTimer timer("selective_scan");
      y = selective_scan(args, ls ? ls->ssm : ssm_scratch, cd);
    }
    return w.out_proj_bias.defined() ? foxeval::linear(y, w.out_proj, w.out_proj_bias) : foxeval::linear(y, w.out_proj);
  }

  at::Tensor attention(const AttentionWeights& w, const at::Tensor& h, const Run& run, LayerState* ls) {
    const int64_t B = h.size(0), T = h.size(1), H = cfg_.num_heads, Hkv = cfg_.num_kv_heads, D = cfg_.head_dim;
    const int64_t W = cfg_.window_size;
    at::Tensor q = rotary(foxeval::linear(h, w.q_proj).view({B, T, H, D}), run.positions, inv_freq_);
    at::Tensor k = rotary(foxeval::linear(h, w.k_proj).view({B, T, Hkv, D}), run.positions, inv_freq_);
    at::Tensor v = foxeval::linear(h, w.v_proj).view({B, T, Hkv, D});
    AttentionArgs args;
    args.q = q.permute({0, 2, 1, 3});
    at::Tensor kh = k.permute({0, 2, 1, 3}), vh = v.permute({0, 2, 1, 3});
    at::Tensor o;
    if (run.slots) {
      // Decoding slots: the new key into its row's slot len % W, then plain attention over the
      // slots held (all inside the window: the ring keeps exactly the last W tokens).
      // (expand, not repeat_interleave: that reads its output size on the host, which a CUDA graph forbids)
      at::Tensor slot = at::remainder(run.slots->len, W).unsqueeze(1).expand({B, Hkv}).reshape({-1});
      at::Tensor rows = run.slots->ring_rows + slot;
      ls->keys.view({-1, D}).index_copy_(0, rows, kh.reshape({B * Hkv, D}));
      ls->values.view({-1, D}).index_copy_(0, rows, vh.reshape({B * Hkv, D}));
      args.k = ls->keys;
      args.v = ls->values;
      args.kv_len = (run.slots->len + 1).clamp_max(W);
      StageTimer timer("attention");
      o = forgetting_attention(args);
    } else if (ls) {
      args.k = ring_then_new(ls->keys, kh, run.consumed);
      args.v = ring_then_new(ls->values, vh, run.consumed);
      args.seq_start = ring_seq_start(run.seq_start, run.consumed, W, B, h.device());
      {
        StageTimer timer("attention");
        o = window_attention(args, W);
      }
      ring_store(ls->keys, args.k, run.consumed + T, W);
      ring_store(ls->values, args.v, run.consumed + T, W);
    } else {
      args.k = kh;
      args.v = vh;
      StageTimer timer("attention");
      o = window_attention(args, W);
    }
    return foxeval::linear(o.permute({0, 2, 1, 3}).reshape({B, T, H * D}), w.o_proj);
  }

  void load(Checkpoint& ckpt) {
    const int64_t Dm = cfg_.hidden_size, E = cfg_.intermediate_size, N = cfg_.state_size, K = cfg_.conv_kernel;
    const int64_t R = cfg_.time_step_rank, kv = cfg_.num_kv_heads * cfg_.head_dim;
    embeddings_ = loader_.fp32("backbone.embeddings.weight", {cfg_.vocab_size, Dm});
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const std::string p = fmt::format("backbone.layers.{}.", l);
      Layer w;
      w.attention = cfg_.is_attention(l);
      w.mixer_norm = loader_.fp32(p + "mixer_norm.weight", {Dm});
      w.mlp_norm = loader_.fp32(p + "mlp_norm.weight", {Dm});
      if (w.attention) {
        w.attn.q_proj = loader_.matmul_weight(p + "mixer.q_proj.weight", {Dm, Dm});
        w.attn.k_proj = loader_.matmul_weight(p + "mixer.k_proj.weight", {kv, Dm});
        w.attn.v_proj = loader_.matmul_weight(p + "mixer.v_proj.weight", {kv, Dm});
        w.attn.o_proj = loader_.matmul_weight(p + "mixer.o_proj.weight", {Dm, Dm});
      } else {
        MambaWeights& m = w.mamba;
        w.mamba_index = mamba_layers_++;
        m.in_proj = loader_.matmul_weight(p + "mixer.in_proj.weight", {2 * E, Dm});
        if (cfg_.use_bias) m.in_proj_bias = loader_.matmul_weight(p + "mixer.in_proj.bias", {2 * E});
        m.conv_weight = loader_.fp32(p + "mixer.conv1d.weight", {E, 1, K}).squeeze(1).contiguous();
        if (cfg_.use_conv_bias) m.conv_bias = loader_.fp32(p + "mixer.conv1d.bias", {E});
        m.x_proj = loader_.matmul_weight(p + "mixer.x_proj.weight", {R + 2 * N, E});
        m.dt_proj = loader_.matmul_weight(p + "mixer.dt_proj.weight", {E, R});
        m.dt_bias = loader_.fp32(p + "mixer.dt_proj.bias", {E});
        m.A = -loader_.fp32(p + "mixer.A_log", {E, N}).exp();
        m.D = loader_.fp32(p + "mixer.D", {E});
        m.out_proj = loader_.matmul_weight(p + "mixer.out_proj.weight", {Dm, E});
        if (cfg_.use_bias) m.out_proj_bias = loader_.matmul_weight(p + "mixer.out_proj.bias", {Dm});
      }
      const int64_t I = w.attention ? cfg_.attn_mlp_size : cfg_.mamba_mlp_size;
      w.gate_proj = loader_.matmul_weight(p + "mlp.gate_proj.weight", {2 * I, Dm});
      w.down_proj = loader_.matmul_weight(p + "mlp.down_proj.weight", {Dm, I});
      layers_.push_back(std::move(w));
    }
    norm_f_ = loader_.fp32("backbone.norm_f.weight", {Dm});
    lm_head_ = cfg_.tie_word_embeddings ? embeddings_.to(loader_.compute)
                                        : loader_.matmul_weight("lm_head.weight", {cfg_.vocab_size, Dm});
    if (cfg_.has_attention)  // inv_freq_i = base^(-2i/D) in fp32, as fla's RotaryEmbedding
      inv_freq_ = at::pow(cfg_.rope_base, at::arange(0, cfg_.head_dim, 2, at::TensorOptions().dtype(at::kFloat)) /
                                              static_cast<double>(cfg_.head_dim))
                      .reciprocal()
                      .to(loader_.device);
    info_ = basic_model_info(ckpt, kFamily, Dm, cfg_.num_layers, cfg_.vocab_size);
    info_.settings = {
        {"layer_pattern", cfg_.has_attention ? "even Mamba-1, odd sliding-window attention" : "all Mamba-1"},
        {"intermediate_size", std::to_string(E)},
        {"state_size", std::to_string(N)},
        {"conv_kernel", std::to_string(K)},
        {"time_step_rank", std::to_string(R)},
        {"mamba_mlp_size", std::to_string(cfg_.mamba_mlp_size)}};
    if (cfg_.has_attention) {
      info_.settings.emplace_back("num_heads", std::to_string(cfg_.num_heads));
      info_.settings.emplace_back("num_kv_heads", std::to_string(cfg_.num_kv_heads));
      info_.settings.emplace_back("head_dim", std::to_string(cfg_.head_dim));
      info_.settings.emplace_back("window_size", std::to_string(cfg_.window_size));
      info_.settings.emplace_back("rope_base", fmt::format("{}", cfg_.rope_base));
      info_.settings.emplace_back("attn_mlp_size", std::to_string(cfg_.attn_mlp_size));
    }
  }

  SambaConfig cfg_;
  RunOptions options_;
  Loader loader_;
  int64_t segment_;
  ModelInfo info_;
  at::Tensor embeddings_, norm_f_, lm_head_, inv_freq_;
  std::vector<Layer> layers_;
  int64_t mamba_layers_ = 0;
};

}  // namespace
}  // namespace samba

std::unique_ptr<CausalLM> make_samba(Checkpoint& checkpoint, const RunOptions& options) {
  return std::make_unique<samba::SambaModel>(checkpoint, options);
}

// config.json model_type -> this family (models/registry.h).
const FamilyRegistrar registered_samba({"samba-project_fox", make_samba});

}  // namespace foxeval
