#include "models/samba/samba_config.h"

#include <fmt/format.h>

#include <cmath>

namespace foxeval {
namespace {

// SambaMLP's width for a hidden_ratio (null: 4, as SambaMLP).
int64_t samba_mlp_size(const Config& c, const std::string& key, int64_t hidden) {
  const double ratio = c.get_double(key, 4.0);
  if (!(ratio > 0)) c.fail(key, fmt::format("= {}: must be positive", ratio));
  const auto raw = static_cast<int64_t>(static_cast<double>(hidden) * ratio * 2.0 / 3.0);
  return 256 * ((raw + 255) / 256);
}

}  // namespace

SambaConfig SambaConfig::parse(const Config& c) {
  SambaConfig m;
  m.hidden_size = c.get_int("hidden_size");
  m.num_layers = c.get_int("num_hidden_layers");
  m.vocab_size = c.get_int("vocab_size");
  if (m.hidden_size < 1) c.fail("hidden_size", "must be positive");
  if (m.num_layers < 0) c.fail("num_hidden_layers", "must be >= 0");
  if (m.vocab_size < 1) c.fail("vocab_size", "must be positive");
  m.state_size = c.get_int("state_size", 16);
  if (m.state_size < 1) c.fail("state_size", "must be positive");
  m.conv_kernel = c.get_int("conv_kernel", 4);
  if (m.conv_kernel < 1) c.fail("conv_kernel", "must be positive");
  // SambaConfig: intermediate_size = int(expand * hidden_size) (written to config.json too).
  const double expand = c.get_double("expand", 2.0);
  m.intermediate_size = static_cast<int64_t>(expand * static_cast<double>(m.hidden_size));
  if (m.intermediate_size < 1)
    c.fail("expand", fmt::format("= {}: int(expand * hidden_size) must be positive", expand));
  if (c.has("intermediate_size") && c.get_int("intermediate_size") != m.intermediate_size)
    c.fail("intermediate_size", fmt::format("= {} differs from int(expand * hidden_size) = {}",
                                            c.get_int("intermediate_size"), m.intermediate_size));
  // time_step_rank: "auto" = ceil(hidden / 16), as SambaConfig.
  const auto& rank = c.json().contains("time_step_rank") ? c.json().at("time_step_rank") : nlohmann::json("auto");
  if (rank.is_string() && rank.get<std::string>() == "auto")
    m.time_step_rank = (m.hidden_size + 15) / 16;
  else
    m.time_step_rank = c.get_int("time_step_rank");
  if (m.time_step_rank < 1) c.fail("time_step_rank", "must be positive or \"auto\"");
  m.use_bias = c.get_bool("use_bias", false);
  m.use_conv_bias = c.get_bool("use_conv_bias", true);
  const std::string act = c.get_string("hidden_act", "silu");
  if (act != "silu" && act != "swish") c.fail("hidden_act", fmt::format("= \"{}\": only silu is supported", act));
  m.norm_eps = c.get_double("norm_eps", 1e-5);
  m.tie_word_embeddings = c.get_bool("tie_word_embeddings", false);
  m.rope_base = c.get_double("rope_base", 500000.0);
  m.attn_mlp_size = samba_mlp_size(c, "attn_hidden_ratio", m.hidden_size);
  m.mamba_mlp_size = samba_mlp_size(c, "mamba_hidden_ratio", m.hidden_size);

  m.has_attention = c.has("attn");
  if (m.has_attention) {
    const nlohmann::json& attn = c.json().at("attn");
    if (!attn.is_object()) c.fail("attn", "must be an object (num_heads, num_kv_heads, window_size, layers) or null");
    Config a(attn, c.path() + " (attn)");
    if (a.has("layers"))
      c.fail("attn", "\"layers\" must be null (odd layers attention): the official SambaBlock asserts on a layer list");
    m.num_heads = a.get_int("num_heads");
    m.num_kv_heads = a.get_int("num_kv_heads", m.num_heads);
    if (m.num_heads < 1 || m.hidden_size % m.num_heads != 0)
      c.fail("attn", fmt::format("num_heads {} must divide hidden_size {}", m.num_heads, m.hidden_size));
    if (m.num_kv_heads < 1 || m.num_heads % m.num_kv_heads != 0)
      c.fail("attn", fmt::format("num_kv_heads {} must divide num_heads {}", m.num_kv_heads, m.num_heads));
    m.head_dim = m.hidden_size / m.num_heads;
    if (m.head_dim % 2 != 0) c.fail("attn", fmt::format("head_dim {} must be even (RoPE)", m.head_dim));
    if (!a.has("window_size"))
      c.fail("attn", "window_size null (full attention) is not supported: Samba's attention layers are sliding-window");
    m.window_size = a.get_int("window_size");
    if (m.window_size < 1) c.fail("attn", fmt::format("window_size {} must be positive", m.window_size));
  }
  return m;
}

}  // namespace foxeval
