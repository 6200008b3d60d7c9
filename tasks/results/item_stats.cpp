#include "tasks/results/item_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/errors.h"
#include "data/python/python_random.h"

namespace foxeval {
namespace {

// random.choices(range(n), k=n) without weights: the resample lm-eval's bootstrap and compare draw.
std::vector<size_t> choices_indices(PythonRandom& rnd, size_t n) {
  std::vector<size_t> idx(n);
  for (size_t& i : idx) i = rnd.choices_index(n);
  return idx;
}

using nlohmann::json;

// Python's sum(xs) / len(xs) for floats: left to right from 0 (CPython 3.11, lm-eval's reference
// interpreter; 3.12 switched sum() to compensated summation).
double py_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double py_sample_stddev(const std::vector<double>& v) {
  const double mu = py_mean(v);
  double ss = 0;
  for (double x : v) ss += (x - mu) * (x - mu);  // (x - mu) ** 2: the same correctly rounded square
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

bool weighted(const std::string& aggregation) {
  return aggregation == "weighted_perplexity" || aggregation == "bits_per_byte";
}

// The aggregation of values[idx] (and weights[idx]) without copying.
double aggregate_at(const std::string& aggregation, const std::vector<double>& v, const std::vector<double>& w,
                    const std::vector<size_t>& idx) {
  double a = 0, b = 0;
  for (size_t i : idx) {
    a += v[i];
    if (!w.empty()) b += w[i];
  }
  if (aggregation == "mean") return a / static_cast<double>(idx.size());
  if (aggregation == "perplexity") return std::exp(-(a / static_cast<double>(idx.size())));
  if (aggregation == "weighted_perplexity") return std::exp(-(a / b));
  if (aggregation == "bits_per_byte") return -(a / b) / std::log(2.0);
  throw Error(fmt::format("per-item scores: unknown aggregation '{}' (mean, perplexity, weighted_perplexity, "
                          "bits_per_byte)",
                          aggregation));
}

std::vector<size_t> all_indices(size_t n) {
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  return idx;
}

void check_items(const std::string& aggregation, const std::vector<double>& values, const std::vector<double>& weights) {
  if (weighted(aggregation) ? weights.size() != values.size() : !weights.empty())
    throw Error(fmt::format("per-item scores: {} weights for {} values of a '{}' aggregation", weights.size(),
                            values.size(), aggregation));
}

// numpy.percentile(xs, q) with its default linear method (numpy/lib/function_base.py: _quantile,
// _compute_virtual_index with alpha = beta = 1, _lerp).
double numpy_percentile(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  const double quantile = q / 100.0, n = static_cast<double>(xs.size());
  const double virtual_index = n * quantile + (1.0 + quantile * (1.0 - 1.0 - 1.0)) - 1.0;
  double previous = std::floor(virtual_index);
  const double gamma = virtual_index - previous;
  previous = std::clamp(previous, 0.0, n - 1);
  const double next = std::clamp(previous + 1, 0.0, n - 1);
  const double a = xs[static_cast<size_t>(previous)], b = xs[static_cast<size_t>(next)];
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1 - gamma) : a + diff * gamma;
}

}  // namespace

double aggregate_items(const std::string& aggregation, const std::vector<double>& values,
                       const std::vector<double>& weights) {
  if (values.empty()) throw Error(fmt::format("per-item scores: aggregation '{}' of no items", aggregation));
  check_items(aggregation, values, weights);
  return aggregate_at(aggregation, values, weights, all_indices(values.size()));
}

double python_mean_stderr(const std::vector<double>& values) {
  return py_sample_stddev(values) / std::sqrt(static_cast<double>(values.size()));
}

double lm_eval_bootstrap_stderr(const std::string& aggregation, const std::vector<double>& values,
                                const std::vector<double>& weights, int64_t iters) {
  check_items(aggregation, values, weights);
  const int64_t chunk = std::min<int64_t>(1000, iters);
  std::vector<double> stats;
  stats.reserve(static_cast<size_t>(iters));
  for (int64_t i = 0; i < iters / chunk; ++i) {
    PythonRandom rnd(static_cast<uint64_t>(i));  // _bootstrap_internal: rnd.seed(i) per chunk
    for (int64_t k = 0; k < chunk; ++k)
      stats.push_back(aggregate_at(aggregation, values, weights, choices_indices(rnd, values.size())));
  }
  return py_sample_stddev(stats);
}

json per_item_entry(const ItemScores& items, std::optional<double> computed) {
  check_items(items.aggregation, items.values, items.weights);
  if (items.ids.size() != items.values.size())
    throw Error(fmt::format("per-item scores: {} ids for {} values", items.ids.size(), items.values.size()));
  json e = {{"ids", items.ids}, {"values", items.values}};
  if (!items.weights.empty()) e["weights"] = items.weights;
  e["aggregation"] = items.aggregation;
  e["n"] = items.values.size();
  if (items.values.size() < 2) {
    e["stderr"] = "N/A";
    e["stderr_method"] = "none (fewer than 2 items)";
  } else if (items.aggregation == "mean") {
    e["stderr"] = computed ? *computed : python_mean_stderr(items.values);
    e["stderr_method"] = "mean_stderr";
  } else {
    e["stderr"] = computed ? *computed : lm_eval_bootstrap_stderr(items.aggregation, items.values, items.weights);
    e["stderr_method"] = "bootstrap";
  }
  return e;
}

ItemScores read_per_item(const json& e, const std::string& where) {
  ItemScores s;
  try {
    if (!e.is_object()) throw Error("not an object");
    for (const json& id : e.at("ids")) s.ids.push_back(id.is_string() ? id.get<std::string>() : id.dump());
    for (const json& v : e.at("values")) s.values.push_back(v.is_number() ? v.get<double>() : NAN);
    if (e.contains("weights"))
      for (const json& w : e["weights"]) s.weights.push_back(w.get<double>());
    s.aggregation = e.value("aggregation", "mean");
    check_items(s.aggregation, s.values, s.weights);
    if (s.ids.size() != s.values.size()) throw Error(fmt::format("{} ids for {} values", s.ids.size(), s.values.size()));
  } catch (const std::exception& err) {
    throw Error(fmt::format("{}: per_item: {}", where, err.what()));
  }
  return s;
}

std::optional<Uncertainty> metric_uncertainty(const json& result, const std::string& metric) {
  if (!result.is_object() || !result.contains("per_item") || !result["per_item"].is_object() ||
      !result["per_item"].contains(metric))
    return std::nullopt;
  const json& e = result["per_item"][metric];
  if (!e.is_object() || !e.contains("n") || !e["n"].is_number_integer()) return std::nullopt;
  Uncertainty u;
  u.n = e["n"].get<int64_t>();
  if (e.contains("stderr") && e["stderr"].is_number()) u.stderr_ = e["stderr"].get<double>();
  return u;
}

double mcnemar_exact_p(int64_t a_only, int64_t b_only) {
  const int64_t m = a_only + b_only, k = std::min(a_only, b_only);
  if (m == 0) return 1.0;
  // P(X <= k) for X ~ Bin(m, 1/2), summed in log space (m may be thousands).
  double tail = 0;
  for (int64_t i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(m + 1.0) - std::lgamma(i + 1.0) - std::lgamma(m - i + 1.0) - m * std::log(2.0));
  return std::min(1.0, 2 * tail);
}

PairedDifference paired_difference(const ItemScores& a, const ItemScores& b, uint64_t seed, int64_t resamples) {
  if (a.aggregation != b.aggregation)
    throw Error(fmt::format("per-item scores aggregated differently ('{}' vs '{}')", a.aggregation, b.aggregation));
  if (a.values.size() != b.values.size() || a.values.empty())
    throw Error(fmt::format("a paired comparison needs the same items on both sides ({} vs {})", a.values.size(),
                            b.values.size()));
  if (resamples < 1) throw Error("a paired comparison needs at least one resample");
  PairedDifference d;
  d.n = static_cast<int64_t>(a.values.size());
  d.a = aggregate_items(a.aggregation, a.values, a.weights);
  d.b = aggregate_items(b.aggregation, b.values, b.weights);
  d.difference = d.b - d.a;
  PythonRandom rnd(seed);
  std::vector<double> diffs;
  diffs.reserve(static_cast<size_t>(resamples));
  for (int64_t r = 0; r < resamples; ++r) {
    const std::vector<size_t> idx = choices_indices(rnd, a.values.size());
    diffs.push_back(aggregate_at(b.aggregation, b.values, b.weights, idx) -
                    aggregate_at(a.aggregation, a.values, a.weights, idx));
  }
  d.low = numpy_percentile(diffs, 2.5);
  d.high = numpy_percentile(diffs, 97.5);
  d.binary = a.aggregation == "mean";
  for (size_t i = 0; i < a.values.size() && d.binary; ++i) {
    const double x = a.values[i], y = b.values[i];
    d.binary = (x == 0 || x == 1) && (y == 0 || y == 1);
    d.a_only += x == 1 && y == 0;
    d.b_only += x == 0 && y == 1;
  }
  if (d.binary) d.mcnemar_p = mcnemar_exact_p(d.a_only, d.b_only);
  else d.a_only = d.b_only = 0;
  return d;
}

}  // namespace foxeval
