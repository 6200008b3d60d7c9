// The config.json options of the FoX family that change the computation.
#pragma once
#include <cstdint>
#include <string>

#include "models/checkpoint/checkpoint.h"

namespace foxeval {

struct FoxConfig {
  int64_t hidden_size = 0, num_layers = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0;
  int64_t vocab_size = 0, intermediate_size = 0;
  double norm_eps = 1e-6;
  std::string hidden_act = "swish";  // MLP gate: "swish" (SwiGLU) or "sigmoid" (GLU)
  std::string fgate_type = "full";   // "full", "bias_only", "fixed" or "none"
  bool use_rope = false;
  double rope_base = 500000.0;
  bool use_output_gate = false;
  std::string ogate_act = "sigmoid";
  bool use_output_norm = false;
  bool qk_norm = false, qk_norm_share_param_across_head = false;
  bool use_k_shift = false, use_v_shift = false;
  bool tie_word_embeddings = false;
  bool has_log_pruning_tolerance = false;
  double log_pruning_tolerance = 0.0;
  // Sliding-window attention (transformer-project_fox's window_size, Transformer (SWA)): the query
  // at position p sees keys p-W+1..p (flash-attn window_size = (W - 1, 0)); 0 = full causal.
  int64_t window_size = 0;
  std::string variant;  // "FoX (Pro)", "Transformer (LLaMA)", ... for `foxeval info`

  static FoxConfig parse_forgetting_transformer(const Config& config);
  static FoxConfig parse_transformer(const Config& config);
};

}  // namespace foxeval
