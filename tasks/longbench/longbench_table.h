// LongBench's tables and report section (`foxeval table`, `foxeval report`): the 14 English
// tasks in table_longbench.py's order and labels plus their average (LongBench-E results: one
// table per length bucket), grouped bars per task in the report. Definitions:
// tasks/longbench/longbench_table.json (the official script's lists, with their source).
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::longbench {

results::ResultKind table_kind();

}  // namespace foxeval::longbench
