// Statistics of a model's decays (FoX forget gates, Mamba-2 / HGRN2 decays), per layer and head,
// summed over documents exactly enough that the order documents come in never changes a number.
//
// For one head, a document and one channel (HGRN2 has several per head, the others one), with
// log decay x_t = log a_t <= 0 per token and c_t = x_0 + ... + x_t (float64, summed in order):
//   * gate values a_t = exp(x_t): their mean, the mean of x_t, the fraction with a_t > p for
//     p = 0.9, 0.99, 0.999 (tested as x_t > ln p), and quantiles (below);
//   * decay reach at tolerance tau (5 and 10): key j counts at query i with exp(c_i - c_j) (the
//     product of the gates after j up to i). idx_i = #{j < i : c_j > c_i + tau}: the keys whose
//     decay is below e^-tau, always a prefix 0..idx_i-1 because c never increases. The reach of
//     query i is r_i = i - idx_i + 1, the distance to the nearest such key; when idx_i = 0 the
//     query sees its whole document above e^-tau and r_i is censored (counted as +infinity).
//     Found with a binary search per query over c (O(T log T), never a T x T matrix).
//     prunable_fraction = sum_i idx_i / sum_i (i + 1): the share of causal (query, key) pairs the
//     decay alone puts below e^-tau, what adaptive computation pruning at that tolerance could
//     skip before its q.k bound (which only lowers it).
// Quantiles are the lower quantile: the k-th smallest value, k = max(1, ceil(q n)). They come from
// histograms so that documents merge: gate values by y = -log a on 50 bins per decade over
// [1e-9, 1e3) (the reported a is exp(-y) at the bin's geometric middle: y within 2.3%; y < 1e-9
// reports 1, y >= 1e3 reports 0); reach exact up to 64, then 32 bins per octave (the bin's
// geometric middle, rounded: within 1.1%). A reach quantile that falls among censored queries is
// null. Means, fractions and counts are exact.
#pragma once
#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace foxeval::inspect {

constexpr double kTolerances[] = {5.0, 10.0};
constexpr int kNumTolerances = 2;
constexpr double kGateThresholds[] = {0.9, 0.99, 0.999};
constexpr double kGateQuantiles[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99};
constexpr double kReachQuantiles[] = {0.1, 0.5, 0.9};

// Histogram bins (see above).
constexpr int kGateBinsPerDecade = 50, kGateBins = 2 + 12 * kGateBinsPerDecade;  // under, 600, over
constexpr int kReachExact = 64, kReachBinsPerOctave = 32, kReachBins = 1 + kReachExact + 26 * kReachBinsPerOctave;
int64_t gate_bin(double y);      // y = -log a >= 0
double gate_bin_value(int64_t bin);  // the a reported for a bin
int64_t reach_bin(int64_t r);    // r >= 1
int64_t reach_bin_value(int64_t bin);

// idx_i (see above) for each row of c [R, T] (float64, non-increasing along T): [R, T] int64.
at::Tensor pruned_keys(const at::Tensor& c, double tau);

// One document's statistics of one layer: log_decay [T, H] or [T, H, K] (any float dtype, any
// device) -> per head {n, sum_a, sum_log, above[3], gate_hist (sparse, flat [bin, count, bin, count, ...]),
// reach: [per tolerance {queries, censored, pruned, pairs, hist (sparse)}]}. Work on the tensor's
// device; only the counts come back.
nlohmann::json layer_record(const at::Tensor& log_decay);

// layer_record of each layer's log decay (all of one shape), several layers at once with their
// heads side by side: the same per-head numbers from a fraction of the kernel launches (a FoX
// model's 24 layers of [65536, 16] in one pass), in groups of at most 2^25 values (fp64
// intermediates stay a few hundred MiB; HGRN2's per-key decays go a layer at a time).
std::vector<nlohmann::json> layer_records(const std::vector<at::Tensor>& log_decays);

// The summary of per-head records (already summed over documents with add_head_records):
// {n, gate: {mean, quantiles, frac_above}, mean_log_gate, reach: {"5": {...}, "10": {...}}}.
nlohmann::json head_summary(const nlohmann::json& head);

// Adds head record `b` into `a` (counts, sums and histograms).
void add_head_records(nlohmann::json& a, const nlohmann::json& b);

}  // namespace foxeval::inspect
