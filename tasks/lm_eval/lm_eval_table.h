// lm-evaluation-harness's table (`foxeval table`, `foxeval report`): table_lm_eval.py's columns,
// wikitext and lambada perplexity, then accuracies (acc_norm where the paper uses it, x100), and
// Avg over its AVG_LIST. Definitions: tasks/lm_eval/lm_eval_table.json (with their source).
#pragma once
#include "tasks/result_kind.h"

namespace foxeval::lm_eval {

results::ResultKind table_kind();

}  // namespace foxeval::lm_eval
