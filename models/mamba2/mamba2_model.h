// Mamba-2 family (`mamba2-project_fox`): the official Mamba2ForCausalLM of the FoX paper's
// baselines, with the mamba_ssm gated RMSNorm (norm after the gate).
//
// The official code has two paths that differ in dt. The paper's numbers came from the GPU
// kernels (mamba_chunk_scan_combined for prefill, selective_state_update for decode):
//   dt = softplus(dt_raw + dt_bias), clamped to time_step_limit only when that is not (0, inf).
// The pure-PyTorch torch_forward (used only without mamba_ssm) instead clamps dt below at
// time_step_min and ignores time_step_limit. foxeval runs the kernels' semantics; the torch
// path's is kept as an option because the official fp32 fixtures `logits_fp32` were made by it.
#pragma once
#include <memory>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

enum class Mamba2Dt {
  kKernels,     // mamba_ssm: dt limited to time_step_limit (no-op at the default (0, inf))
  kTorchClamp,  // official torch_forward: dt >= time_step_min, time_step_limit ignored
};

// The kernels' semantics (what the registry loads).
std::unique_ptr<CausalLM> make_mamba2(Checkpoint& checkpoint, const RunOptions& options);
std::unique_ptr<CausalLM> make_mamba2(Checkpoint& checkpoint, const RunOptions& options, Mamba2Dt dt);

}  // namespace foxeval
