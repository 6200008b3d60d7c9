// DeltaNet (Yang et al., 2024) as the FoX paper's baseline. Per layer:
//   h = RMSNorm(x);  q, k, v = silu(short_conv(proj h));  q, k = l2norm(q), l2norm(k) per head
//   beta = sigmoid(b_proj h)
//   S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T;  o_t = S_t^T q_t / sqrt(head_k_dim)
//   x += o_proj(RMSNorm_per_head(o));  x += SwiGLU(RMSNorm(x))
// The official layer applies o_norm whatever use_output_norm says; so does this one.
#include "models/delta_net/delta_net_model.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>

#include <cmath>

#include "data/errors.h"
#include "kernels/fused_glue.h"
#include "models/layers/layers.h"
#include "models/layers/recurrent_lm.h"
#include "models/registry.h"

namespace foxeval {
namespace {

const char* kFamily = "DeltaNet";

struct DeltaNetConfig : recurrent::FlaCommonConfig {
  int64_t num_heads, key_dim, value_dim, head_k_dim, head_v_dim;
  bool use_beta, use_output_norm;
  std::string qk_norm, qk_activation;

  static DeltaNetConfig parse(const Config& c) {
    DeltaNetConfig m;
    static_cast<recurrent::FlaCommonConfig&>(m) = recurrent::parse_fla_common(c, /*use_short_conv_default=*/true);
    m.num_heads = c.get_int("num_heads");
    m.key_dim = static_cast<int64_t>(static_cast<double>(m.hidden_size) * c.get_double("expand_k", 1.0));
    m.value_dim = static_cast<int64_t>(static_cast<double>(m.hidden_size) * c.get_double("expand_v", 1.0));
    if (m.num_heads <= 0 || m.key_dim % m.num_heads != 0)
      c.fail("num_heads", fmt::format("= {} must divide the key dim {}", m.num_heads, m.key_dim));
    if (m.value_dim % m.num_heads != 0)
      c.fail("num_heads", fmt::format("= {} must divide the value dim {}", m.num_heads, m.value_dim));
    m.head_k_dim = m.key_dim / m.num_heads;
    m.head_v_dim = m.value_dim / m.num_heads;
    if (c.get_bool("use_gate", false)) c.fail("use_gate", "= true (gated output norm) is not supported");
    if (c.get_bool("norm_first", false)) c.fail("norm_first", "= true is not supported");
    m.use_beta = c.get_bool("use_beta", true);
    m.use_output_norm = c.get_bool("use_output_norm", true);
    m.qk_norm = c.get_string("qk_norm", "l2");
    if (m.qk_norm != "l2" && m.qk_norm != "sum") c.fail("qk_norm", fmt::format("= \"{}\" is not l2 or sum", m.qk_norm));
    m.qk_activation = c.get_string("qk_activation", "silu");
    if (m.qk_activation != "silu" && m.qk_activation != "relu" && m.qk_activation != "elu" &&
        m.qk_activation != "identity")
      c.fail("qk_activation", fmt::format("= \"{}\" is not silu, relu, elu or identity", m.qk_activation));
    return m;
  }
};

struct Layer {
  at::Tensor attn_norm, mlp_norm, o_norm;                 // fp32
  at::Tensor q_proj, k_proj, v_proj, b_proj, o_proj;      // compute dtype
  at::Tensor q_conv, k_conv, v_conv;                      // fp32 [C, K]
  at::Tensor gate_proj, down_proj;
};

enum Slot { kConvQ = 0, kConvK = 1, kConvV = 2, kDeltaState = 3, kSlots = 4 };

class DeltaNetModel : public recurrent::RecurrentLM {
 public:
  DeltaNetModel(Checkpoint& ckpt, const RunOptions& options)
      : RecurrentLM(ckpt, options, kFamily, kSlots, recurrent::kSegment), cfg_(DeltaNetConfig::parse(ckpt.config())) {
    load(ckpt);
  }

 private:
  at::Tensor forward_segment(const at::Tensor& ids, recurrent::RecurrentState* state) override {
    return recurrent::fla_block_stack(ids, state, embeddings_, layers_, norm_, cfg_.eps, loader_.compute, loader_.device,
                                      [&](const Layer& w, const at::Tensor& h, const at::Tensor& real,
                                          std::vector<at::Tensor>* slots) { return attention(w, h, real, slots); });
  }

  DecayInfo decay_info() const override {
    DecayInfo d;
    d.what = "DeltaNet has no decay: the delta rule S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T erases "
             "only along the current key k_t (beta is a write strength), nothing fades with distance";
    d.layers = cfg_.num_layers;
    d.heads = cfg_.num_heads;
    return d;
  }

  at::Tensor short_conv(const at::Tensor& x, const at::Tensor& weight, bool silu, const at::Tensor& real,
                        std::vector<at::Tensor>* slots, int slot) {
    return recurrent::fla_short_conv(x, weight, silu, real, slots ? &(*slots)[slot] : nullptr, loader_.compute);
  }

  at::Tensor qk_feature(at::Tensor t) {  // [B, T, H, Dk] compute dtype
    const at::ScalarType cd = loader_.compute;
    if (cfg_.qk_norm == "l2" && cfg_.qk_activation != "relu" && cfg_.qk_activation != "elu" &&
        recurrent::scan_impl(t, cd) == recurrent::ScanImpl::kKernel) {
      // One pass instead of ~8 (fla's l2_norm_fn is one Triton kernel too): per head
      // x * rsqrt(sum(x^2) + 1e-6) = x * rsqrt(mean(x^2) + 1e-6 / Dk) * (1 / sqrt(Dk)), the fused
      // group RMSNorm with a constant weight; fp32 inside (only the sum order and one rounding of
      // the weight product differ from the chain below), rounded to cd and kept in it: the
      // delta-rule kernel reads it as it is.
      const int64_t B = t.size(0), T = t.size(1), H = t.size(2), Dk = t.size(3);
      at::Tensor y = fused_group_rms_norm(t.reshape({B, T, H * Dk}), l2_weight_, H, 1e-6 / static_cast<double>(Dk), cd);
      if (y.defined()) return y.view({B, T, H, Dk});
    }
    at::Tensor f = t.to(at::kFloat);
    if (cfg_.qk_activation == "relu") f = recurrent::round_to(at::relu(f), cd);
    if (cfg_.qk_activation == "elu") f = recurrent::round_to(at::elu(f) + 1.0, cd);
    if (cfg_.qk_norm == "l2") {
      f = f * at::rsqrt(f.square().sum({-1}, /*keepdim=*/true) + 1e-6);  // fla l2_norm_fn, eps 1e-6
    } else {
      f = f / f.sum({-1}, /*keepdim=*/true);
    }
    return recurrent::round_to(f, cd);
  }

  at::Tensor attention(const Layer& w, const at::Tensor& h, const at::Tensor& real, std::vector<at::Tensor>* slots) {
    const int64_t B = h.size(0), T = h.size(1), H = cfg_.num_heads, Dk = cfg_.head_k_dim, Dv = cfg_.head_v_dim;
    const at::ScalarType cd = loader_.compute;
    at::Tensor q = foxeval::linear(h, w.q_proj), k = foxeval::linear(h, w.k_proj), v = foxeval::linear(h, w.v_proj);
    if (cfg_.use_short_conv) {
      const bool qk_silu = cfg_.qk_activation == "silu";
      q = short_conv(q, w.q_conv, qk_silu, real, slots, kConvQ);
      k = short_conv(k, w.k_conv, qk_silu, real, slots, kConvK);
      v = short_conv(v, w.v_conv, true, real, slots, kConvV);
    } else {
      v = at::silu(v.to(at::kFloat)).to(cd);
    }
    v = recurrent::zero_padding(v, real);  // left padding: no value written to the state
    at::Tensor qh = qk_feature(q.view({B, T, H, Dk})).transpose(1, 2);
    at::Tensor kh = qk_feature(k.view({B, T, H, Dk})).transpose(1, 2);
    // On the GPU path (bf16 q and k from qk_feature) v stays bf16 too: recurrent::delta_rule's
    // chunked kernel reads bf16 q, k, v as they are (the values it would round them to).
    at::Tensor vh = (qh.scalar_type() == at::kFloat ? v.to(at::kFloat) : v).view({B, T, H, Dv}).transpose(1, 2);
    at::Tensor beta = cfg_.use_beta ? recurrent::round_to(at::sigmoid(foxeval::linear(h, w.b_proj).to(at::kFloat)), cd)
                                    : at::ones({B, T, H}, h.options().dtype(at::kFloat));
    at::Tensor delta_state;
    at::Tensor& st = slots ? (*slots)[kDeltaState] : delta_state;
    at::Tensor o = recurrent::delta_rule(qh, kh, vh, beta.transpose(1, 2), 1.0 / std::sqrt(static_cast<double>(Dk)), st,
                                          recurrent::scan_impl(qh, cd));
    o = o.transpose(1, 2).to(cd);                          // [B, T, H, Dv], the kernel writes q's dtype
    o = foxeval::rms_norm(o, w.o_norm, cfg_.eps, cd).reshape({B, T, H * Dv});
    return foxeval::linear(o, w.o_proj);
  }

  void load(Checkpoint& ckpt) {
    const int64_t D = cfg_.hidden_size, Kd = cfg_.key_dim, Vd = cfg_.value_dim, I = cfg_.intermediate_size;
    const int64_t Kc = cfg_.conv_size;
    embeddings_ = loader_.fp32("model.embeddings.weight", {cfg_.vocab_size, D});
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const std::string p = fmt::format("model.layers.{}.", l);
      Layer w;
      w.attn_norm = loader_.fp32(p + "attn_norm.weight", {D});
      w.q_proj = loader_.matmul_weight(p + "attn.q_proj.weight", {Kd, D});
      w.k_proj = loader_.matmul_weight(p + "attn.k_proj.weight", {Kd, D});
      w.v_proj = loader_.matmul_weight(p + "attn.v_proj.weight", {Vd, D});
      if (cfg_.use_beta) w.b_proj = loader_.matmul_weight(p + "attn.b_proj.weight", {cfg_.num_heads, D});
      if (cfg_.use_short_conv) {
        w.q_conv = loader_.fp32(p + "attn.q_conv1d.weight", {Kd, 1, Kc}).squeeze(1);
        w.k_conv = loader_.fp32(p + "attn.k_conv1d.weight", {Kd, 1, Kc}).squeeze(1);
        w.v_conv = loader_.fp32(p + "attn.v_conv1d.weight", {Vd, 1, Kc}).squeeze(1);
      }
      w.o_norm = loader_.fp32(p + "attn.o_norm.weight", {cfg_.head_v_dim});
      w.o_proj = loader_.matmul_weight(p + "attn.o_proj.weight", {D, Vd});
      w.mlp_norm = loader_.fp32(p + "mlp_norm.weight", {D});
      w.gate_proj = loader_.matmul_weight(p + "mlp.gate_proj.weight", {2 * I, D});
      w.down_proj = loader_.matmul_weight(p + "mlp.down_proj.weight", {D, I});
      layers_.push_back(std::move(w));
    }
    norm_ = loader_.fp32("model.norm.weight", {D});
    l2_weight_ = at::full({Kd}, 1.0 / std::sqrt(static_cast<double>(cfg_.head_k_dim)),
                          at::TensorOptions().dtype(at::kFloat).device(loader_.device));
    lm_head_ = cfg_.tie_word_embeddings ? embeddings_.to(loader_.compute)
                                        : loader_.matmul_weight("lm_head.weight", {cfg_.vocab_size, D});
    info_ = basic_model_info(ckpt, kFamily, D, cfg_.num_layers, cfg_.vocab_size);
    info_.settings = {{"num_heads", std::to_string(cfg_.num_heads)},
                      {"head_k_dim", std::to_string(cfg_.head_k_dim)},
                      {"head_v_dim", std::to_string(cfg_.head_v_dim)},
                      {"intermediate_size", std::to_string(I)},
                      {"use_short_conv", cfg_.use_short_conv ? "true" : "false"},
                      {"qk_activation", cfg_.qk_activation},
                      {"qk_norm", cfg_.qk_norm},
                      {"use_beta", cfg_.use_beta ? "true" : "false"},
                      {"use_output_norm", cfg_.use_output_norm ? "true" : "false (o_norm applied anyway, as official)"}};
  }

  DeltaNetConfig cfg_;
  at::Tensor embeddings_, norm_;
  at::Tensor l2_weight_;  // fp32 [key_dim] = 1/sqrt(head_k_dim): qk_feature's fused l2 norm
  std::vector<Layer> layers_;
};

}  // namespace

std::unique_ptr<CausalLM> make_delta_net(Checkpoint& checkpoint, const RunOptions& options) {
  return std::make_unique<DeltaNetModel>(checkpoint, options);
}

// config.json model_type -> this family (models/registry.h).
const FamilyRegistrar registered_delta_net({"delta_net-project_fox", make_delta_net});

}  // namespace foxeval
