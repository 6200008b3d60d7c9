// The ROUGE-L F that LongBench's rouge_score reads from the `rouge` package (1.0.1):
// Rouge().get_scores([hyp], [ref], avg=True)["rouge-l"]["f"], i.e. rouge_l_summary_level with
// exclusive=True: texts split into "sentences" on '.', words joined/split on single spaces,
// union-LCS counted over distinct words, F = 2 * (P * R) / (P + R + 1e-8).
#pragma once
#include <optional>
#include <string>

namespace foxeval::longbench {

// Deepest chain of rouge's recursive _recon that CPython's default recursion limit (1000) allows
// when eval.py's scorer calls rouge_score: 9 frames sit above the first _recon (<module>, scorer,
// rouge_score, get_scores, _get_avg_scores, <lambda>, rouge_l_summary_level, _union_lcs,
// _recon_lcs). Measured with CPython 3.11.7 (tests/tools/longbench_metrics_golden.py checks it).
constexpr int kRougeMaxReconDepth = 991;
// rouge_zh_score calls rouge_score: one frame more above _recon, one step less for the backtrack.
constexpr int kRougeZhMaxReconDepth = kRougeMaxReconDepth - 1;

// The F value, or nullopt where get_scores raises and metrics.py's bare `except` scores 0: a text
// with no non-empty sentence ("Hypothesis is empty", "Collections must contain at least 1
// sentence"), or an LCS backtrack deeper than `max_recon_depth` (RecursionError).
std::optional<double> rouge_l_f(const std::string& hypothesis, const std::string& reference,
                                int max_recon_depth = kRougeMaxReconDepth);

}  // namespace foxeval::longbench
