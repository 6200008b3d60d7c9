// DeltaNet family (`delta_net-project_fox`): the FoX paper's DeltaNet baseline (official
// DeltaNetForCausalLM with flash-linear-attention's delta rule, short convolutions, l2-normed q/k).
#pragma once
#include <memory>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

std::unique_ptr<CausalLM> make_delta_net(Checkpoint& checkpoint, const RunOptions& options);

}  // namespace foxeval
