// BABILong's tables (`foxeval table`, `foxeval report`): accuracy x 100 per length, one table for
// the mean over the tasks run (lm-eval's group aggregation, weighted by documents) and one per task.
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::babilong {

results::ResultKind table_kind();

}  // namespace foxeval::babilong
