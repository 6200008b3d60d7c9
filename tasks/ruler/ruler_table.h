// RULER's tables (`foxeval table`, `foxeval report`): score x 100 by context length for the `ruler`
// mean over the tasks run; per length, the categories (NIAH / multi-hop tracing / aggregation / QA)
// beside the mean, and the tasks. The report adds the score-against-length figure.
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::ruler {

results::ResultKind table_kind();

}  // namespace foxeval::ruler
