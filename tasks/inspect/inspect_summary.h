// `foxeval inspect gates`' summary on stdout: per layer and head the gate's mean, median, share
// above 0.99, mean log and reach medians (a shard part prints nothing: `foxeval merge` makes them).
#pragma once
#include <nlohmann/json.hpp>

namespace foxeval::inspect {

void print_gates_summary(const nlohmann::json& r);

}  // namespace foxeval::inspect
