// Mamba-2 family (`mamba2-project_fox`): the official Mamba2ForCausalLM of the FoX paper's
// baselines, following its torch reference path (the SSD "naive" chunked scan, dt clamped
// below at time_step_min) with the mamba_ssm gated RMSNorm (norm after the gate).
#pragma once
#include <memory>

#include "models/checkpoint.h"
#include "models/model.h"

namespace foxeval {

std::unique_ptr<CausalLM> make_mamba2(Checkpoint& checkpoint, const RunOptions& options);

}  // namespace foxeval
