// RULER's scores as lm-eval 0.4.13 computes them (lm_eval/tasks/ruler/common_utils.py): the
// prediction cleaned by postprocess_pred, each expected output looked for case-insensitively in it
// (string_match_all for every task but QA, string_match_part for ruler_qa_*: with lm-eval's one
// prediction a doc the two are equal), the doc's score the share of outputs found, and a task's score
// at a length the mean over its docs of that max_length (aggregate_metrics; -1 when none).
// Tested against lm-eval's own functions (tests/tools/ruler_metric_goldens.py).
#pragma once
#include <string>
#include <vector>

namespace foxeval::ruler {

// postprocess_pred: strip(), every character in \x00-\x1f made "\n", strip() again.
std::string postprocess_pred(const std::string& prediction);

// process_results / process_results_part for one doc: the share of `outputs` whose lower() is a
// substring of the cleaned prediction's lower().
double string_match_all(const std::string& prediction, const std::vector<std::string>& outputs);
double string_match_part(const std::string& prediction, const std::vector<std::string>& outputs);

// aggregate_metrics(values): the mean of the values that are not -1 (Python's left-to-right sum,
// then the division), -1 when there are none.
double aggregate_metrics(const std::vector<double>& values);

}  // namespace foxeval::ruler
