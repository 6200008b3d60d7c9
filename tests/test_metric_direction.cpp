// Metric directions (tasks/results/metric_direction.h): every task's scores by their result paths, and
// what has none (counts, standard errors, per-item bookkeeping).
#include <doctest/doctest.h>

#include "tasks/results/metric_direction.h"

namespace foxeval {
namespace {

TEST_CASE("metric directions: every task's metrics, one table") {
  for (const char* m : {"results/piqa/acc,none", "results/hellaswag/acc_norm,none", "results/lambada_openai/acc,none",
                        "scores/qasper", "scores/trec/0-4k", "mean", "judge/mean", "mean_by_length/1/mean",
                        "cells/3/score", "per_item/results/piqa/acc,none/values", "per_item/scores/lcc/values"})
    CHECK_MESSAGE(metric_direction(m) == Direction::Higher, m);
  for (const char* m : {"val/loss_avg_len_512", "val/loss_per_token", "val/perplexity_len_1024",
                        "results/wikitext/word_perplexity,none", "results/wikitext/bits_per_byte,none",
                        "results/lambada_openai/perplexity,none", "per_item/val/loss_avg_len_512/values"})
    CHECK_MESSAGE(metric_direction(m) == Direction::Lower, m);
  for (const char* m : {"results/piqa/acc_stderr,none", "results/lambada_openai/perplexity_stderr,none", "documents",
                        "n-samples/piqa/effective", "cells/0/length", "cells/0/prompt_tokens", "per_item/mean/n",
                        "per_item/mean/stderr", "per_item/results/wikitext/word_perplexity,none/weights", "tokens"})
    CHECK_MESSAGE(metric_direction(m) == Direction::None, m);
  CHECK(std::string(direction_name(Direction::Lower)) == "lower");
}

}  // namespace
}  // namespace foxeval
