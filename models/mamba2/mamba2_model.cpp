// Mamba-2 (Dao & Gu, 2024) as the FoX paper's baseline. Per layer:
//   h = RMSNorm(x);  [z | xBC | dt] = in_proj(h);  xBC = silu(causal_conv(xBC))
//   [x | B | C] = xBC;  dt = clamp(softplus(dt + dt_bias), time_step_limit);  A = -exp(A_log)
//   S_t = exp(dt_t A) S_{t-1} + dt_t x_t B_t^T;  y_t = S_t C_t + D x_t        (per head)
//   x += out_proj(RMSNorm(y * silu(z)))
// Numerics as the official torch path under bf16 autocast: in_proj/conv/out_proj in bf16, the
// scan, dt and the gated norm in fp32; on a GPU in bf16 as mamba_ssm's kernels (the scan's
// output y + D x rounded to bf16, see `mixer`). dt as the mamba_ssm kernels (see mamba2_model.h): the
// official torch path's clamp at time_step_min is only an option (Mamba2Dt::kTorchClamp).
// The scan is foxeval's exact chunked form, without the official torch path's inter-chunk sum
// over the wrong chunk axis (its outputs past the first 256 tokens depend on the total length).
#include "models/mamba2/mamba2_model.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "data/errors.h"
#include "data/python/python_json.h"
#include "kernels/mamba2_glue.h"
#include "kernels/recurrent_gla.h"
#include "models/layers/layers.h"
#include "models/layers/recurrent_lm.h"
#include "models/registry.h"
#include "models/stage_timer.h"

namespace foxeval {
// Named, so that its Layer/Slot/kFamily stay apart from the other families' in a unity build.
namespace mamba2 {
namespace {

const char* kFamily = "Mamba-2";

struct Mamba2Config {
  int64_t hidden_size, num_layers, vocab_size, num_heads, head_dim, state_size, n_groups, conv_kernel;
  int64_t intermediate_size, conv_dim, chunk_size;
  double eps, time_step_min;
  double dt_min = 0.0, dt_max = std::numeric_limits<double>::infinity();  // time_step_limit
  bool use_bias, use_conv_bias, tie_word_embeddings;

  static Mamba2Config parse(const Config& c) {
    Mamba2Config m;
    m.hidden_size = c.get_int("hidden_size");
    m.num_layers = c.get_int("num_hidden_layers");
    m.vocab_size = c.get_int("vocab_size");
    m.num_heads = c.get_int("num_heads");
    m.head_dim = c.get_int("head_dim");
    m.state_size = c.get_int("state_size");
    m.n_groups = c.get_int("n_groups", 8);  // the official default
    if (m.n_groups != 1) c.fail("n_groups", fmt::format("= {}: the official Mamba-2 code supports only 1", m.n_groups));
    m.conv_kernel = c.get_int("conv_kernel", 4);
    if (m.conv_kernel < 1) c.fail("conv_kernel", "must be positive");
    const double expand = c.get_double("expand", 2.0);
    const double inter = expand * static_cast<double>(m.hidden_size);
    m.intermediate_size = static_cast<int64_t>(inter);
    if (static_cast<double>(m.intermediate_size) != inter || m.num_heads * m.head_dim != m.intermediate_size)
      c.fail("expand", fmt::format("* hidden_size = {} must equal num_heads * head_dim = {}", inter,
                                   m.num_heads * m.head_dim));
    m.conv_dim = m.intermediate_size + 2 * m.n_groups * m.state_size;
    m.eps = c.get_double("layer_norm_epsilon", 1e-5);
    m.time_step_min = c.get_double("time_step_min", 0.001);
    m.use_bias = c.get_bool("use_bias", false);
    m.use_conv_bias = c.get_bool("use_conv_bias", true);
    m.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
    // The SSD chunk length of the official scan: numerically irrelevant here (foxeval chunks
    // its own exact scan), read for validation only.
    m.chunk_size = c.get_int("chunk_size", 256);
    if (m.chunk_size <= 0) c.fail("chunk_size", "must be positive");
    const std::string act = c.get_string("hidden_act", "silu");
    if (act != "silu" && act != "swish") c.fail("hidden_act", fmt::format("= \"{}\": only silu is supported", act));
    if (!c.get_bool("rms_norm", true)) c.fail("rms_norm", "= false is not supported (the official code always uses RMSNorm)");
    // mamba_ssm's dt_limit. Infinity arrives as a double (bare Infinity, read by
    // read_python_json) or as transformers' {"__float__": "Infinity"}.
    if (c.has("time_step_limit")) {
      const auto& lim = c.json().at("time_step_limit");
      std::optional<double> lo, hi;
      if (lim.is_array() && lim.size() == 2) {
        lo = python_float(lim[0]);
        hi = python_float(lim[1]);
      }
      // (dump() writes non-finite doubles as null: say what was expected instead.)
      if (!lo || !hi)
        c.fail("time_step_limit", fmt::format("= {}: expected [min, max], two numbers (max may be Infinity)", lim.dump()));
      // (mamba_ssm does not check; min <= 0 is harmless as softplus >= 0, min >= max is nonsense.)
      if (std::isnan(*lo) || std::isnan(*hi) || !(*lo < *hi))
        c.fail("time_step_limit", fmt::format("= [{}, {}]: expected min < max", *lo, *hi));
      m.dt_min = *lo;
      m.dt_max = *hi;
    }
    return m;
  }
};

struct Layer {
  at::Tensor norm;                  // fp32 [D]
  at::Tensor in_proj, in_proj_bias;  // compute dtype
  at::Tensor conv_weight, conv_bias;  // fp32 [conv_dim, K], [conv_dim] (bf16-rounded in bf16 mode)
  at::Tensor dt_bias, A, D;         // fp32 [H]; A = -exp(A_log)
  at::Tensor gated_norm;            // fp32 [E]
  at::Tensor out_proj, out_proj_bias;
};

enum Slot { kConvState = 0, kSsmState = 1, kSlots = 2 };

class Mamba2Model : public recurrent::RecurrentLM {
 public:
  Mamba2Model(Checkpoint& ckpt, const RunOptions& options, Mamba2Dt dt)
      : RecurrentLM(ckpt, options, kFamily, kSlots, recurrent::kSegment), cfg_(Mamba2Config::parse(ckpt.config())), dt_(dt) {
    load(ckpt);
  }

 private:
  at::Tensor forward_segment(const at::Tensor& ids, recurrent::RecurrentState* state) override {
    const int64_t offset = state ? state->consumed : 0;
    at::Tensor real = state ? recurrent::real_token_mask(state->seq_start, offset, ids.size(1), loader_.device) : at::Tensor();
    at::Tensor x = at::embedding(embeddings_, ids).contiguous();  // fp32 residual stream
    if (layers_.empty()) return foxeval::rms_norm(x, norm_f_, cfg_.eps, at::kFloat);
    // The mixer reads h only through in_proj, which casts it to the compute dtype: the norm
    // writes that dtype itself (the same bits). The residual add and the next norm are one pass.
    at::Tensor h = foxeval::rms_norm(x, layers_[0].norm, cfg_.eps, loader_.compute);
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      std::vector<at::Tensor>* slots = state ? &state->layers[l] : nullptr;
      const bool last = l + 1 == cfg_.num_layers;
      h = recurrent::add_rms_norm(x, mixer(l, layers_[l], h, real, slots), last ? norm_f_ : layers_[l + 1].norm, cfg_.eps,
                                  last ? at::kFloat : loader_.compute);
    }
    if (state) state->consumed += ids.size(1);
    return h;
  }

  at::Tensor mixer(int64_t layer, const Layer& w, const at::Tensor& h_in, const at::Tensor& real, std::vector<at::Tensor>* slots) {
    const int64_t B = h_in.size(0), T = h_in.size(1), E = cfg_.intermediate_size, N = cfg_.state_size;
    const int64_t H = cfg_.num_heads, P = cfg_.head_dim;
    const at::ScalarType cd = loader_.compute;
    // Padding: the official code zeroes the mixer input at padded positions; zeroing the conv
    // input and x as well makes them exactly absent (as if the row started later).
    at::Tensor h = recurrent::zero_padding(h_in, real);
    at::Tensor proj = w.in_proj_bias.defined() ? foxeval::linear(h, w.in_proj, w.in_proj_bias) : foxeval::linear(h, w.in_proj);
    at::Tensor z = proj.narrow(-1, 0, E);
    at::Tensor xbc = proj.narrow(-1, E, cfg_.conv_dim);  // padded positions read as 0 by the conv
    at::Tensor dt_raw = proj.narrow(-1, E + cfg_.conv_dim, H);
    at::Tensor conv_state;
    at::Tensor* conv_slot = slots ? &(*slots)[kConvState] : &conv_state;
    // The GPU path of bf16/fp16 runs follows mamba_ssm's kernels: the conv output stays in the
    // compute dtype (its values are that dtype's already: nothing lost), the scan reads x, B, C
    // in place, and y = scan + D x is rounded to the compute dtype before the gated norm (the
    // chunk scan's bf16 output). The exact path (CPU, fp32, FOXEVAL_RECURRENT_IMPL=aten) keeps
    // everything from the conv on in fp32.
    const bool gpu_path = recurrent::scan_impl(proj, cd) == recurrent::ScanImpl::kKernel;
    // autocast: the conv output is bf16, silu reads and writes bf16: round(silu(round(conv, cd)), cd).
    at::Tensor conv = recurrent::causal_conv1d(xbc, w.conv_weight, w.conv_bias, conv_slot, real, cd,
                                               gpu_path ? cd : at::kFloat);
    at::Tensor xs = recurrent::zero_padding(conv.narrow(-1, 0, E), real).view({B, T, H, P});
    at::Tensor dt = time_step(at::softplus(dt_raw.to(at::kFloat) + w.dt_bias));  // [B,T,H]
    at::Tensor log_decay = dt * w.A;                                             // [B,T,H]
    if (capture_) capture_->log_decay(layer, log_decay);
    at::Tensor g = log_decay.permute({0, 2, 1}).unsqueeze(-1);                 // [B,H,T,1]
    // B, C [B,T,N] read by every head: expanded views, never copied.
    auto heads = [&](const at::Tensor& m) { return m.unsqueeze(1).expand({B, H, T, N}); };
    at::Tensor Bc = conv.narrow(-1, E, N), Cc = conv.narrow(-1, E + N, N);
    at::Tensor ssm_state;
    at::Tensor& ssm = slots ? (*slots)[kSsmState] : ssm_state;
    at::Tensor normed;
    const at::Tensor xh = xs.permute({0, 2, 1, 3}), dth = dt.permute({0, 2, 1});  // [B,H,T,P], [B,H,T]
    if (gpu_path && T > 1 && kernels::ssd_cuda_supports(xh, dth, heads(Cc), heads(Bc), g, w.D)) {
      at::Tensor y;  // [B,T,H,P] in cd, the D skip included
      {
        StageTimer timer("gla");
        y = kernels::ssd_chunked_cuda(xh, dth, heads(Cc), heads(Bc), g, w.D, ssm);
      }
      normed = gated_norm(w, y.permute({0, 2, 1, 3}), at::Tensor(), z);
    } else {
      at::Tensor xf = xs.to(at::kFloat);
      at::Tensor v = (xf * dt.unsqueeze(-1)).permute({0, 2, 1, 3});  // [B,H,T,P]
      at::Tensor y = recurrent::gated_linear_attention(heads(Cc.to(at::kFloat)), heads(Bc.to(at::kFloat)), v, g, 1.0,
                                                       ssm, recurrent::scan_impl(v, cd));  // [B,H,T,P]
      if (gpu_path) {  // decode steps (and shapes the SSD kernel does not take): the same y as its
        y = (y.permute({0, 2, 1, 3}) + xf * w.D.view({H, 1})).to(cd).permute({0, 2, 1, 3});
        normed = gated_norm(w, y, at::Tensor(), z);
      } else {
        normed = gated_norm(w, y, xf, z);
      }
    }
    return w.out_proj_bias.defined() ? foxeval::linear(normed, w.out_proj, w.out_proj_bias) : foxeval::linear(normed, w.out_proj);
  }

  // y [B,H,T,P] (+ xs [B,T,H,P] * D where xs is defined; else y includes it), then mamba_ssm
  // RMSNormGated(norm_before_gate=False): RMSNorm(y * silu(z)) per group in fp32, in the
  // out_proj's dtype. On a GPU for bf16/fp16 runs (scan_impl's rule) one fused kernel
  // (kernels/mamba2_glue.h) where it supports the arguments: the same ops, only the norm's sum
  // order differs.
  at::Tensor gated_norm(const Layer& w, const at::Tensor& y, const at::Tensor& xs, const at::Tensor& z) const {
    StageTimer timer("gated_norm");
    const at::ScalarType out = w.out_proj.scalar_type();
    if (recurrent::scan_impl(y, loader_.compute) == recurrent::ScanImpl::kKernel &&
        mamba2_gated_norm_supports(y, xs, w.D, z, w.gated_norm, cfg_.n_groups, out))
      return mamba2_gated_norm(y, xs, w.D, z, w.gated_norm, cfg_.n_groups, cfg_.eps, out);
    const int64_t B = y.size(0), H = y.size(1), T = y.size(2), E = cfg_.intermediate_size;
    at::Tensor u = y.permute({0, 2, 1, 3}).to(at::kFloat);
    if (xs.defined()) u = u + xs * w.D.view({H, 1});
    at::Tensor gated = u.reshape({B, T, E}) * at::silu(z.to(at::kFloat));
    return foxeval::group_rms_norm(gated, w.gated_norm, cfg_.n_groups, cfg_.eps, at::kFloat);
  }

  // Prefill and decode alike (the official kernel decode, selective_state_update, is called
  // without dt_limit: it would ignore a non-default time_step_limit that its prefill applies;
  // foxeval applies it in both so that decode equals prefill).
  at::Tensor time_step(const at::Tensor& dt) const {
    if (dt_ == Mamba2Dt::kTorchClamp) return dt.clamp_min(cfg_.time_step_min);
    // mamba_ssm clamps only when dt_limit != (0, inf). dt is fp32 and softplus >= 0, so a bound
    // <= 0 or beyond the fp32 range is the identity (and must not reach clamp: an fp32 tensor
    // refuses a bound like 1e308 that overflows float).
    const bool lower = cfg_.dt_min > 0.0;
    const bool upper = cfg_.dt_max < static_cast<double>(std::numeric_limits<float>::max());
    if (!lower && !upper) return dt;
    return at::clamp(dt, lower ? std::optional<at::Scalar>(cfg_.dt_min) : std::nullopt,
                     upper ? std::optional<at::Scalar>(cfg_.dt_max) : std::nullopt);
  }

  DecayInfo decay_info() const override {
    DecayInfo d;
    d.kind = "ssm_decay";
    d.what = "Mamba-2 state decay a_t = exp(dt_t * A), one per head and token (dt = softplus(dt_raw + dt_bias), "
             "A = -exp(A_log)); the state keeps token j's write at token i with prod_{j<l<=i} a_l";
    d.layers = cfg_.num_layers;
    d.heads = cfg_.num_heads;
    return d;
  }

  void load(Checkpoint& ckpt) {
    const int64_t D = cfg_.hidden_size, E = cfg_.intermediate_size, H = cfg_.num_heads, K = cfg_.conv_kernel;
    const int64_t proj = E + cfg_.conv_dim + H;
    // The official load hook renames "embedding." to "embeddings.".
    const std::string emb = ckpt.contains("backbone.embedding.weight") ? "backbone.embedding.weight"
                                                                        : "backbone.embeddings.weight";
    embeddings_ = loader_.fp32(emb, {cfg_.vocab_size, D});
    for (int64_t l = 0; l < cfg_.num_layers; ++l) {
      const std::string p = fmt::format("backbone.layers.{}.", l);
      Layer w;
      w.norm = loader_.fp32(p + "norm.weight", {D});
      w.in_proj = loader_.matmul_weight(p + "mixer.in_proj.weight", {proj, D});
      if (cfg_.use_bias) w.in_proj_bias = loader_.matmul_weight(p + "mixer.in_proj.bias", {proj});
      // autocast runs the conv in bf16: its weights are rounded to bf16, the sum is fp32.
      w.conv_weight =
          recurrent::round_to(loader_.fp32(p + "mixer.conv1d.weight", {cfg_.conv_dim, 1, K}).squeeze(1), loader_.compute);
      if (cfg_.use_conv_bias)
        w.conv_bias = recurrent::round_to(loader_.fp32(p + "mixer.conv1d.bias", {cfg_.conv_dim}), loader_.compute);
      w.dt_bias = loader_.fp32(p + "mixer.dt_bias", {H});
      w.A = -loader_.fp32(p + "mixer.A_log", {H}).exp();
      w.D = loader_.fp32(p + "mixer.D", {H});
      w.gated_norm = loader_.fp32(p + "mixer.norm.weight", {E});
      w.out_proj = loader_.matmul_weight(p + "mixer.out_proj.weight", {D, E});
      if (cfg_.use_bias) w.out_proj_bias = loader_.matmul_weight(p + "mixer.out_proj.bias", {D});
      layers_.push_back(std::move(w));
    }
    norm_f_ = loader_.fp32("backbone.norm_f.weight", {D});
    lm_head_ = cfg_.tie_word_embeddings ? embeddings_.to(loader_.compute)
                                        : loader_.matmul_weight("lm_head.weight", {cfg_.vocab_size, D});
    info_ = basic_model_info(ckpt, kFamily, D, cfg_.num_layers, cfg_.vocab_size);
    info_.settings = {{"num_heads", std::to_string(H)},
                      {"head_dim", std::to_string(cfg_.head_dim)},
                      {"state_size", std::to_string(cfg_.state_size)},
                      {"n_groups", std::to_string(cfg_.n_groups)},
                      {"conv_kernel", std::to_string(K)},
                      {"intermediate_size", std::to_string(E)},
                      {"dt", dt_ == Mamba2Dt::kKernels
                                 ? fmt::format("mamba_ssm kernels: time_step_limit [{}, {}]", cfg_.dt_min, cfg_.dt_max)
                                 : fmt::format("official torch path: clamped at time_step_min {}", cfg_.time_step_min)}};
  }

  Mamba2Config cfg_;
  Mamba2Dt dt_;
  at::Tensor embeddings_, norm_f_;
  std::vector<Layer> layers_;
};

}  // namespace
}  // namespace mamba2

std::unique_ptr<CausalLM> make_mamba2(Checkpoint& checkpoint, const RunOptions& options, Mamba2Dt dt) {
  return std::make_unique<mamba2::Mamba2Model>(checkpoint, options, dt);
}

std::unique_ptr<CausalLM> make_mamba2(Checkpoint& checkpoint, const RunOptions& options) {
  return make_mamba2(checkpoint, options, Mamba2Dt::kKernels);
}

// config.json model_type -> this family (models/registry.h).
const FamilyRegistrar registered_mamba2({"mamba2-project_fox", make_mamba2});

}  // namespace foxeval
