// `foxeval lm-eval run`'s summary on stdout: lm-eval's table of task, metric,filter, value and
// stderr (a shard part prints nothing: `foxeval merge` makes the result).
#pragma once
#include <nlohmann/json.hpp>

namespace foxeval::lm_eval {

void print_lm_eval_summary(const nlohmann::json& result);

}  // namespace foxeval::lm_eval
