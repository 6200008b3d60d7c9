// The `inspect-gates` result kind for `foxeval table` and `foxeval report` (tasks/result_kind.h):
// one row per model with its gates over all heads, and the reach heatmap as the report's section.
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::inspect {

results::ResultKind table_kind();

}  // namespace foxeval::inspect
