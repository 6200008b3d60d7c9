// Samba (`samba-project_fox`): the official SambaForCausalLM of the FoX paper's baselines. Layers
// alternate as the official SambaBlock with attn.layers null: even layers fla's Mamba-1
// MambaMixer, odd layers sliding-window attention with RoPE and grouped KV heads; each followed by
// a SwiGLU MLP (attn_hidden_ratio / mamba_hidden_ratio). See samba_model.cpp for the math.
#pragma once
#include <memory>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

std::unique_ptr<CausalLM> make_samba(Checkpoint& checkpoint, const RunOptions& options);

}  // namespace foxeval
