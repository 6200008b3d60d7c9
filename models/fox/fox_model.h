// FoX family: `forgetting_transformer-project_fox` (FoX LLaMA/Pro, and Transformer Pro via
// fgate_type "none" + use_rope) and `transformer-project_fox` (Transformer LLaMA), which is the
// same block with RoPE, no forget gate and none of the Pro options.
#pragma once
#include <memory>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

std::unique_ptr<CausalLM> make_forgetting_transformer(Checkpoint& checkpoint, const RunOptions& options);
std::unique_ptr<CausalLM> make_transformer(Checkpoint& checkpoint, const RunOptions& options);

}  // namespace foxeval
