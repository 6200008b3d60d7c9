#include "models/fox/fox_config.h"

#include <fmt/format.h>

#include "models/layers/layers.h"

namespace foxeval {
namespace {

// Fields both model types share (LLaMA-style block: RMSNorm, SwiGLU MLP).
void parse_common(const Config& c, FoxConfig& f) {
  f.hidden_size = c.get_int("hidden_size");
  f.num_layers = c.get_int("num_hidden_layers");
  f.num_heads = c.get_int("num_heads");
  f.vocab_size = c.get_int("vocab_size");
  f.norm_eps = c.get_double("norm_eps", 1e-6);
  if (f.hidden_size <= 0 || f.num_heads <= 0 || f.hidden_size % f.num_heads != 0)
    c.fail("num_heads", fmt::format("= {} must divide hidden_size = {}", f.num_heads, f.hidden_size));
  f.head_dim = f.hidden_size / f.num_heads;
  f.num_kv_heads = c.get_int("num_kv_heads", f.num_heads);
  if (f.num_kv_heads <= 0 || f.num_heads % f.num_kv_heads != 0)
    c.fail("num_kv_heads", fmt::format("= {} must divide num_heads = {}", f.num_kv_heads, f.num_heads));
  f.intermediate_size = mlp_intermediate_size(c, f.hidden_size);
  f.hidden_act = c.get_string("hidden_act", "swish");
  if (f.hidden_act != "swish" && f.hidden_act != "sigmoid")
    c.fail("hidden_act", fmt::format("= \"{}\" is not supported (swish or sigmoid)", f.hidden_act));
  f.rope_base = c.get_double("rope_base", 500000.0);
  f.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
  c.require_default("attention_bias", false);
  c.require_default("elementwise_affine", true);
}

}  // namespace

FoxConfig FoxConfig::parse_forgetting_transformer(const Config& c) {
  FoxConfig f;
  parse_common(c, f);
  // The official FoX layer keeps window_size but never applies it ("Not used. Should be None" in
  // its docstring; its forgetting attention always sees every past key): a FoX config with a
  // window would be run as full attention, which is not what the config says.
  if (c.has("window_size"))
    c.fail("window_size", fmt::format("= {} is not supported (only null): the official forgetting_transformer-project_fox "
                                      "stores window_size but never applies it (its attention sees every past key); a "
                                      "sliding window is transformer-project_fox's (Transformer (SWA))",
                                      c.json().at("window_size").dump()));
  f.use_rope = c.get_bool("use_rope", false);
  f.fgate_type = c.get_string("fgate_type", "full");
  if (f.fgate_type != "full" && f.fgate_type != "bias_only" && f.fgate_type != "fixed" && f.fgate_type != "none")
    c.fail("fgate_type", fmt::format("= \"{}\" is not one of full, bias_only, fixed, none", f.fgate_type));
  f.use_output_gate = c.get_bool("use_output_gate", false);
  f.ogate_act = c.get_string("ogate_act", "sigmoid");
  if (f.ogate_act != "sigmoid" && f.ogate_act != "silu")
    c.fail("ogate_act", fmt::format("= \"{}\" is not sigmoid or silu", f.ogate_act));
  f.use_output_norm = c.get_bool("use_output_norm", false);
  if (f.use_output_norm && f.use_output_gate && f.ogate_act != "sigmoid")
    c.fail("ogate_act", "must be sigmoid when use_output_norm and use_output_gate are both set");
  f.qk_norm = c.get_bool("qk_norm", false);
  f.qk_norm_share_param_across_head = c.get_bool("qk_norm_share_param_across_head", false);
  f.use_k_shift = c.get_bool("use_k_shift", false);
  f.use_v_shift = c.get_bool("use_v_shift", false);
  if (f.num_kv_heads != f.num_heads && (f.use_k_shift || f.use_v_shift || f.qk_norm))
    c.fail("num_kv_heads", "grouped KV heads are not supported together with token shift or qk_norm");
  if (c.has("log_pruning_tolerance")) {
    f.has_log_pruning_tolerance = true;
    f.log_pruning_tolerance = c.get_double("log_pruning_tolerance");
  }
  const bool pro = f.use_k_shift || f.use_v_shift || f.qk_norm || f.use_output_gate || f.use_output_norm;
  f.variant = fmt::format("{} ({})", f.fgate_type == "none" ? "Transformer" : "FoX", pro ? "Pro" : "LLaMA");
  return f;
}

FoxConfig FoxConfig::parse_transformer(const Config& c) {
  FoxConfig f;
  parse_common(c, f);
  f.use_rope = c.get_bool("use_rope", true);
  f.fgate_type = "none";
  f.variant = "Transformer (LLaMA)";
  if (c.has("window_size")) {  // flash_attn_func(window_size=(W - 1, 0)): keys p-W+1..p
    f.window_size = c.get_int("window_size");
    // flash-attn reads a negative left window as unbounded, so the official code would run W <= 0 as
    // full attention: refused rather than guessed (null is full attention).
    if (f.window_size < 1)
      c.fail("window_size", fmt::format("= {} must be a whole number >= 1 (or null for full attention)", f.window_size));
    f.variant = "Transformer (SWA)";
  }
  return f;
}

}  // namespace foxeval
