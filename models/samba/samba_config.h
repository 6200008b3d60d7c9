// config.json of `samba-project_fox` (the official SambaConfig), read and checked: every size the
// model needs comes from here.
#pragma once
#include <cstdint>

#include "models/checkpoint/checkpoint.h"

namespace foxeval {

struct SambaConfig {
  int64_t hidden_size = 0, num_layers = 0, vocab_size = 0;
  // Mamba-1 layers (fla's MambaMixer): E = expand * hidden channels, N states, conv kernel K,
  // time_step_rank R (dt = dt_proj(x_proj(x)[:R])).
  int64_t intermediate_size = 0, state_size = 0, conv_kernel = 0, time_step_rank = 0;
  bool use_bias = false, use_conv_bias = true;
  // Attention layers: heads, grouped kv heads, head_dim = hidden / heads, flash-attn's window
  // (query i sees keys i - window + 1 .. i), RoPE base.
  bool has_attention = false;  // attn: null = every layer Mamba
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0, window_size = 0;
  double rope_base = 500000.0;
  // SwiGLU MLP widths after attention / Mamba layers (SambaMLP: 256 * ceil(int(hidden * ratio * 2/3) / 256)).
  int64_t attn_mlp_size = 0, mamba_mlp_size = 0;
  double norm_eps = 1e-5;
  bool tie_word_embeddings = false;

  // attn.layers null: odd layers attention, even layers Mamba (the official SambaBlock).
  bool is_attention(int64_t layer) const { return has_attention && layer % 2 == 1; }

  static SambaConfig parse(const Config& c);
};

}  // namespace foxeval
