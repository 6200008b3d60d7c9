// `foxeval loss`'s summary on stdout: loss, then perplexity, by length in numeric order, and the
// run's speed, memory and what of the data was evaluated.
#pragma once
#include <nlohmann/json.hpp>

namespace foxeval::loss {

void print_loss_summary(const nlohmann::json& r);

}  // namespace foxeval::loss
