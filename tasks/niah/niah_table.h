// Needle in a haystack's table and report section (`foxeval table`, `foxeval report`): the mean
// score of each mode (and of the judge, where a result has one), a heatmap per result.
// Definitions: tasks/niah/niah_table.json.
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::niah {

results::ResultKind table_kind();

}  // namespace foxeval::niah
