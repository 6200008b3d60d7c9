// Per-item scores and their uncertainty, the same for every task: what a result keeps of each
// item (document, record, cell) beside its headline numbers, so that tables can show n and a
// standard error and `foxeval compare` can pair two results item by item.
//
// A result's "per_item" object maps a metric path (as `foxeval check` names metrics:
// "results/piqa/acc,none", "scores/qasper", "mean", "val/loss_avg_len_512") to
//   {"ids": [item ids, strings], "values": [one number per item], "weights": [...] (only for
//    weighted aggregations), "aggregation": how values become the metric, "n": items,
//    "stderr": number or "N/A", "stderr_method": how it was computed}
// Aggregations (lm-eval 0.4.4's names): "mean" (values in the metric's units), "perplexity"
// (exp(-mean(values)), values are log-likelihoods), "weighted_perplexity" (exp(-sum(v)/sum(w))),
// "bits_per_byte" (-sum(v)/sum(w)/ln 2).
// Stderr methods:
//   "mean_stderr"  lm-eval's closed form sample_stddev/sqrt(n) (api/metrics.py), Python's
//                  left-to-right sums, for "mean" aggregations (every task's mean scores);
//   "bootstrap"    lm-eval's bootstrap_stderr: 100 chunks of 1000 resamples, chunk i drawn by
//                  random.Random(i).choices(xs, k=n), sample_stddev of the 100000 statistics; as
//                  lm-eval for "perplexity", and by the same procedure (lm-eval reports none) for
//                  the weighted aggregations.
// One item gives no stderr ("N/A"), as lm-eval.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace foxeval {

// One metric's items.
struct ItemScores {
  std::vector<std::string> ids;
  std::vector<double> values, weights;  // weights: only for the weighted aggregations
  std::string aggregation = "mean";
};

// The metric the items give (the aggregation of all of them).
double aggregate_items(const std::string& aggregation, const std::vector<double>& values,
                       const std::vector<double>& weights);
// lm-eval's sample_stddev(xs) / sqrt(len(xs)) with Python's sums.
double python_mean_stderr(const std::vector<double>& values);
// lm-eval 0.4.4's bootstrap_stderr of the aggregation over the items (see above).
double lm_eval_bootstrap_stderr(const std::string& aggregation, const std::vector<double>& values,
                                const std::vector<double>& weights, int64_t iters = 100000);

// The "per_item" entry of a metric: items, n, stderr and its method (see above). `computed`: the
// stderr when the caller already has it by the same method (a full lambada bootstrap takes ~5 s).
nlohmann::json per_item_entry(const ItemScores& items, std::optional<double> computed = std::nullopt);
// Reads one back; errors name `where` (file and metric).
ItemScores read_per_item(const nlohmann::json& entry, const std::string& where);

// A metric's n and stderr from a result's per_item (nullopt: the result keeps none for it).
struct Uncertainty {
  int64_t n = 0;
  std::optional<double> stderr_;  // none: "N/A"
};
std::optional<Uncertainty> metric_uncertainty(const nlohmann::json& result, const std::string& metric);

// A paired comparison of two results' items (b - a on the items both have, in a's order).
struct PairedDifference {
  int64_t n = 0;
  double a = 0, b = 0, difference = 0;  // the aggregations over the shared items, b - a
  double low = 0, high = 0;             // the paired bootstrap's 95% percentile interval
  // For 0/1 items (accuracies): McNemar's exact two-sided p-value over the discordant pairs
  // (a right and b wrong: `a_only`, the reverse `b_only`).
  bool binary = false;
  int64_t a_only = 0, b_only = 0;
  double mcnemar_p = 1;
};
// The interval: `resamples` draws of n item indices by random.Random(seed).choices(range(n), k=n)
// (one generator for all draws), the aggregation of b's and a's values at those indices each time,
// their difference; numpy.percentile's linear interpolation at 2.5 and 97.5.
PairedDifference paired_difference(const ItemScores& a, const ItemScores& b, uint64_t seed = 1234,
                                   int64_t resamples = 10000);
// Exact two-sided binomial p-value of McNemar's test: min(1, 2 * P(X <= min(b, c))), X ~ Bin(b + c, 1/2).
double mcnemar_exact_p(int64_t a_only, int64_t b_only);

}  // namespace foxeval
