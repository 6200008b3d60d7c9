// Which way is better, for every metric foxeval writes: the one place `table` (ranking), `check`
// (improved or worsened) and `compare` (better or worse) read it from.
//
// A metric is named by its path in a result, as `foxeval check` flattens it ("results/piqa/acc,none",
// "scores/qasper", "mean", "val/loss_avg_len_512"); per-item entries ("per_item/METRIC/values") go
// the way of METRIC. Each task declares its metrics' directions in its definition (tasks/task_def.h,
// first match wins); standard errors, and what no rule names (counts, lengths, settings), have none.
#pragma once
#include <string>

namespace foxeval {

enum class Direction { Higher, Lower, None };

// `task`: the result's header.task; "" or a task not registered (and the first form): the first
// rule of any task.
Direction metric_direction(const std::string& metric, const std::string& task);
Direction metric_direction(const std::string& metric);
// "higher", "lower", "none".
const char* direction_name(Direction d);
// '*' matches any run of characters; everything else matches itself (the metric patterns of the
// direction rules and of `check`'s tolerances).
bool glob_match(const std::string& pattern, const std::string& s);

}  // namespace foxeval
