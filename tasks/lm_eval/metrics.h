// lm-eval 0.4.4's scoring: ConfigurableTask.process_results per document (acc, acc_norm,
// perplexity, word/byte perplexity, bits_per_byte) and lm_eval/api/metrics.py's aggregations and
// stderr, in the same floating-point operation order, so the numbers are lm-eval's to the bit.
//
// Stderr: lm-eval reports the closed form sample_stddev/sqrt(n) for "mean" metrics (acc,
// acc_norm), "N/A" for weighted_perplexity and bits_per_byte, and a 100000-sample bootstrap for
// lambada's "perplexity", which is seeded (chunk i draws from random.Random(i)) and so
// reproducible: foxeval computes it as lm-eval does (tasks/results/item_stats.h, tested against lm-eval's
// own bootstrap_stderr). The delta-method estimate perplexity * mean_stderr(loglikelihoods) is
// also given, named as such (see perplexity_stderr_delta_method).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/results/item_stats.h"
#include "tasks/lm_eval/task_config.h"

namespace foxeval::lm_eval {

struct Answer {
  double logprob = 0;
  bool is_greedy = false;
};

// What process_results needs of a document besides its answers (kept in the run's records, so
// `foxeval merge` rescores without the data).
struct DocScoring {
  int64_t gold = -1;                 // multiple_choice
  std::vector<int64_t> choice_len;   // multiple_choice: len(choice) in code points (Python len)
  int64_t words = 0, bytes = 0;      // loglikelihood_rolling
};

// process_results: {"acc": 1.0, "acc_norm": 0.0} / {"perplexity": ll, "acc": 1} /
// {"word_perplexity": [ll, words], "byte_perplexity": [ll, bytes], "bits_per_byte": [ll, bytes]}.
// Only the task's metrics are present. For rolling tasks `answers` are the document's windows,
// summed in order (HFLM sums them so).
nlohmann::json process_results(const TaskConfig& task, const DocScoring& doc, const std::vector<Answer>& answers);

// lm-eval's aggregations of the per-document values of one metric.
double aggregate(const std::string& aggregation, const std::vector<nlohmann::json>& items);
double mean_stderr(const std::vector<double>& values);  // sample stddev / sqrt(n)

// One metric's per-document values for the result's per_item (tasks/results/item_stats.h): the value of
// a mean or perplexity metric, the log-likelihood with its words or bytes as weight for the
// weighted ones; `ids` are the documents' ids, in the order of `doc_metrics`.
ItemScores metric_items(const MetricSpec& m, const std::vector<std::string>& ids,
                        const std::vector<nlohmann::json>& doc_metrics);

// A task's entry of lm-eval's results dict: {"alias": name, "<metric>,none": value,
// "<metric>_stderr,none": value or "N/A", ...} from every document's process_results.
nlohmann::json task_results(const TaskConfig& task, const std::vector<nlohmann::json>& doc_metrics);

// exp(-mean(ll)) * mean_stderr(ll): the first-order (delta method) stderr of a "perplexity"
// aggregation, which lm-eval bootstraps instead. NaN for fewer than 2 documents.
double perplexity_stderr_delta_method(const std::vector<nlohmann::json>& items);

}  // namespace foxeval::lm_eval
