// HGRN2 family (`hgrn2-project_fox`): the FoX paper's HGRN2 baseline (official HGRN2ForCausalLM
// with flash-linear-attention's HGRN2Attention and chunk_gla semantics).
#pragma once
#include <memory>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

std::unique_ptr<CausalLM> make_hgrn2(Checkpoint& checkpoint, const RunOptions& options);

}  // namespace foxeval
