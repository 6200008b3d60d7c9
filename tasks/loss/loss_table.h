// The held-out loss table and report section (`foxeval table`, `foxeval report`):
// val/loss_avg_len_L at each length L (lower is better), and the per-token loss curves.
// Definitions: tasks/loss/loss_table.json.
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::loss {

results::ResultKind table_kind();

}  // namespace foxeval::loss
