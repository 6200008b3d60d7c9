// HGRN2 (Qin et al., 2024) as the FoX paper's baseline. Per layer, with heads of
// expand_ratio forget dimensions:
//   h = RMSNorm(x);  q = silu(q_proj h);  f = f_proj h;  i = i_proj h   (optional short convs)
//   k = 1 - sigmoid(f);  g = logsigmoid(f)
//   S_t = diag(exp(g_t)) S_{t-1} + k_t i_t^T;  o_t = S_t^T q_t / sqrt(expand_ratio)   (chunk_gla)
//   x += o_proj(RMSNorm(o));  x += SwiGLU(RMSNorm(x))
// The official block never passes the learned lower bound to the attention, so
// `model.lower_bounds` is loaded (it is in every checkpoint) and unused, as there.
#include "models/hgrn2/hgrn2_model.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>

#include <cmath>

#include "data/errors.h"
#include "models/layers/layers.h"
#include "models/layers/recurrent_lm.h"
#include "models/registry.h"

namespace foxeval {
// Named, so that its Layer/Slot/kFamily stay apart from the other families' in a unity build.
namespace hgrn2 {
namespace {

const char* kFamily = "HGRN2";

struct Hgrn2Config : recurrent::FlaCommonConfig {
  int64_t num_heads, expand_ratio, forget_dim, head_i_dim;
  bool use_lower_bound, elementwise_affine;

  static Hgrn2Config parse(const Config& c) {
    Hgrn2Config m;
    static_cast<recurrent::FlaCommonConfig&>(m) = recurrent::parse_fla_common(c, /*use_short_conv_default=*/false);
    const bool has_ratio = c.has("expand_ratio"), has_heads = c.has("num_heads");
    if (!has_ratio && !has_heads) c.fail("expand_ratio", "and num_heads are both missing: one must be given");
    if (has_heads) {
      m.num_heads = c.get_int("num_heads");
      if (m.num_heads <= 0 || m.hidden_size % m.num_heads != 0)
        c.fail("num_heads", fmt::format("= {} must divide hidden_size = {}", m.num_heads, m.hidden_size));
    }
    if (has_ratio) {
      m.expand_ratio = c.get_int("expand_ratio");
      if (m.expand_ratio <= 0) c.fail("expand_ratio", "must be positive");
    }
    if (!has_heads) {
      if (m.hidden_size % m.expand_ratio != 0)
        c.fail("expand_ratio", fmt::format("= {} must divide hidden_size = {}", m.expand_ratio, m.hidden_size));
      m.num_heads = m.hidden_size / m.expand_ratio;
    }
    if (!has_ratio) m.expand_ratio = m.hidden_size / m.num_heads;
    m.forget_dim = m.num_heads * m.expand_ratio;
    m.head_i_dim = m.hidden_size / m.num_heads;
    m.use_lower_bound = c.get_bool("use_lower_bound", true);
    m.elementwise_affine = c.get_bool("elementwise_affine", true);
    return m;
  }
};

struct Layer {
  at::Tensor attn_norm, mlp_norm, g_norm;          // fp32
  at::Tensor q_proj, f_proj, i_proj, o_proj;        // compute dtype
  at::Tensor q_conv, f_conv, i_conv;                // fp32 [C, K] (short conv only)
  at::Tensor gate_proj, down_proj;
};

enum Slot { kConvQ = 0, kConvF = 1, kConvI = 2, kGlaState = 3, kSlots = 4 };

class Hgrn2Model : public recurrent::RecurrentLM {
 public:
  Hgrn2Model(Checkpoint& ckpt, const RunOptions& options)
      : RecurrentLM(ckpt, options, kFamily, kSlots, recurrent::kSegment), cfg_(Hgrn2Config::parse(ckpt.config())) {
    load(ckpt);
  }

 private:
  at::Tensor forward_segment(const at::Tensor& ids, recurrent::RecurrentState* state) override {
    return recurrent::fla_block_stack(ids, state, embeddings_, layers_, norm_, cfg_.eps, loader_.compute, loader_.device,
                                      [&](const Layer& w, const at::Tensor& h, const at::Tensor& real,
                                          std::vector<at::Tensor>* slots) {
                                        return attention(static_cast<int64_t>(&w - layers_.data()), w, h, real, slots);
                                      });
  }

  DecayInfo decay_info() const override {
    DecayInfo d;
    d.kind = "channel_forget_gate";
    d.what = fmt::format("HGRN2 forget gate g = sigmoid(f_proj x_t), one per key dimension: {} per head "
                         "(expand_ratio) and token; channel c of the state keeps token j's write at token i "
                         "with prod_{{j<l<=i}} g_l[c] (the learned lower bound is unused, as in the official forward)",
                         cfg_.expand_ratio);
    d.layers = cfg_.num_layers;
    d.heads = cfg_.num_heads;
    d.channels = cfg_.expand_ratio;
    return d;
  }

  // fla ShortConvolution without activation.
  at::Tensor short_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& real,
                        std::vector<at::Tensor>* slots, int slot) {
    return recurrent::fla_short_conv(x, weight, false, real, slots ? &(*slots)[slot] : nullptr, loader_.compute);
  }

  at::Tensor attention(int64_t layer, const Layer& w, const at::Tensor& h, const at::Tensor& real,
                       std::vector<at::Tensor>* slots) {
    const int64_t B = h.size(0), T = h.size(1), H = cfg_.num_heads, K = cfg_.expand_ratio, V = cfg_.head_i_dim;
    const at::ScalarType cd = loader_.compute;
    at::Tensor q = foxeval::linear(h, w.q_proj), f = foxeval::linear(h, w.f_proj), i = foxeval::linear(h, w.i_proj);
    if (cfg_.use_short_conv) {
      q = short_conv(q, w.q_conv, real, slots, kConvQ);
      f = short_conv(f, w.f_conv, real, slots, kConvF);
      i = short_conv(i, w.i_conv, real, slots, kConvI);
    }
    i = recurrent::zero_padding(i, real);  // left padding: no input ...
    q = recurrent::round_to(at::silu(q.to(at::kFloat)), cd);
    at::Tensor f32 = f.to(at::kFloat);
    at::Tensor k = recurrent::round_to(1.0 - at::sigmoid(f32), cd);  // cast to i's dtype as the official
    at::Tensor g = recurrent::zero_padding(at::log_sigmoid(f32), real);  // ... and no decay
    if (capture_) capture_->log_decay(layer, g.reshape({B, T, H, K}));
    auto heads = [&](const at::Tensor& t, int64_t d) { return t.to(at::kFloat).view({B, T, H, d}).transpose(1, 2); };
    at::Tensor gla_state;
    at::Tensor& st = slots ? (*slots)[kGlaState] : gla_state;
    at::Tensor o = recurrent::gated_linear_attention(heads(q, K), heads(k, K), heads(i, V), heads(g, K),
                                                     1.0 / std::sqrt(static_cast<double>(K)), st, recurrent::scan_impl(q, cd));
    o = o.transpose(1, 2).reshape({B, T, H * V}).to(cd);  // chunk_gla writes v's dtype
    o = foxeval::rms_norm(o, w.g_norm, cfg_.eps, cd);
    return foxeval::linear(o, w.o_proj);
  }

  void load(Checkpoint& ckpt) {
    const int64_t D = cfg_.hidden_size, F = cfg_.forget_dim, I = cfg_.intermediate_size, Kc = cfg_.conv_size;
    embeddings_ = loader_.fp32("model.embeddings.weight", {cfg_.vocab_size, D});
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const std::string p = fmt::format("model.layers.{}.", l);
      Layer w;
      w.attn_norm = loader_.fp32(p + "attn_norm.weight", {D});
      w.q_proj = loader_.matmul_weight(p + "attn.q_proj.weight", {F, D});
      w.f_proj = loader_.matmul_weight(p + "attn.f_proj.weight", {F, D});
      w.i_proj = loader_.matmul_weight(p + "attn.i_proj.weight", {D, D});
      if (cfg_.use_short_conv) {
        w.q_conv = loader_.fp32(p + "attn.q_conv1d.weight", {F, 1, Kc}).squeeze(1);
        w.f_conv = loader_.fp32(p + "attn.f_conv1d.weight", {F, 1, Kc}).squeeze(1);
        w.i_conv = loader_.fp32(p + "attn.i_conv1d.weight", {D, 1, Kc}).squeeze(1);
      }
      w.g_norm = cfg_.elementwise_affine ? loader_.fp32(p + "attn.g_norm.weight", {D})
                                         : at::ones({D}, at::TensorOptions().dtype(at::kFloat).device(loader_.device));
      w.o_proj = loader_.matmul_weight(p + "attn.o_proj.weight", {D, D});
      w.mlp_norm = loader_.fp32(p + "mlp_norm.weight", {D});
      w.gate_proj = loader_.matmul_weight(p + "mlp.gate_proj.weight", {2 * I, D});
      w.down_proj = loader_.matmul_weight(p + "mlp.down_proj.weight", {D, I});
      layers_.push_back(std::move(w));
    }
    if (cfg_.use_lower_bound) loader_.fp32("model.lower_bounds", {cfg_.num_layers, D});  // unused by the official forward
    norm_ = loader_.fp32("model.norm.weight", {D});
    lm_head_ = cfg_.tie_word_embeddings ? embeddings_.to(loader_.compute)
                                        : loader_.matmul_weight("lm_head.weight", {cfg_.vocab_size, D});
    info_ = basic_model_info(ckpt, kFamily, D, cfg_.num_layers, cfg_.vocab_size);
    info_.settings = {{"num_heads", std::to_string(cfg_.num_heads)},
                      {"expand_ratio", std::to_string(cfg_.expand_ratio)},
                      {"intermediate_size", std::to_string(I)},
                      {"use_short_conv", cfg_.use_short_conv ? "true" : "false"},
                      {"use_lower_bound", cfg_.use_lower_bound ? "true (loaded, unused as in the official forward)" : "false"}};
  }

  Hgrn2Config cfg_;
  at::Tensor embeddings_, norm_;
  std::vector<Layer> layers_;
};

}  // namespace
}  // namespace hgrn2

std::unique_ptr<CausalLM> make_hgrn2(Checkpoint& checkpoint, const RunOptions& options) {
  return std::make_unique<hgrn2::Hgrn2Model>(checkpoint, options);
}

// config.json model_type -> this family (models/registry.h).
const FamilyRegistrar registered_hgrn2({"hgrn2-project_fox", make_hgrn2});

}  // namespace foxeval
