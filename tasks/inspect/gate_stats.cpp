#include "tasks/inspect/gate_stats.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "data/errors.h"

namespace foxeval::inspect {
namespace {

constexpr double kGateLow = 1e-9, kGateHigh = 1e3;  // y = -log a range of the decade bins
constexpr int kGateLowExp = 9;                      // kGateLow = 10^-kGateLowExp

// Bin of every y = -x (x the log decay, float64 tensor), as gate_bin.
at::Tensor gate_bins(const at::Tensor& x) {
  at::Tensor y = x.neg();
  at::Tensor b = (at::floor((at::log10(y) + kGateLowExp) * kGateBinsPerDecade) + 1).clamp(1, kGateBins - 2);
  b = at::where(y < kGateLow, at::zeros_like(b), b);
  b = at::where(y >= kGateHigh, at::full_like(b, kGateBins - 1), b);
  return b.to(at::kLong);
}

// Bin of every reach r >= 1 (int64 tensor), as reach_bin.
at::Tensor reach_bins(const at::Tensor& r) {
  at::Tensor rd = r.to(at::kDouble);
  at::Tensor far = (at::floor(at::log2(rd / kReachExact) * kReachBinsPerOctave) + (kReachExact + 1)).clamp_max(kReachBins - 1);
  return at::where(r <= kReachExact, r, far.to(at::kLong));
}

// Per-head histogram [H, bins] of bin indices [H, ...] (values outside [0, bins) are dropped).
// On a GPU by sorting and counting runs: most values of a head fall in a handful of bins, and
// bincount's atomics on those few counters serialise (it was the slowest step of inspect gates).
at::Tensor per_head_hist(const at::Tensor& bins, int64_t H, int64_t nbins) {
  at::Tensor valid = (bins >= 0) & (bins < nbins);
  at::Tensor offs = at::arange(H, bins.options()).view({H, 1}) * (nbins + 1);
  at::Tensor flat = (at::where(valid, bins, at::full_like(bins, nbins)).view({H, -1}) + offs).reshape({-1});
  if (!flat.is_cuda()) return at::bincount(flat, {}, H * (nbins + 1)).view({H, nbins + 1}).narrow(1, 0, nbins);
  const at::Tensor sorted = std::get<0>(at::sort(flat));
  const auto runs = at::unique_consecutive(sorted, /*return_inverse=*/false, /*return_counts=*/true);
  at::Tensor hist = at::zeros({H * (nbins + 1)}, flat.options());
  hist.index_put_({std::get<0>(runs)}, std::get<2>(runs));
  return hist.view({H, nbins + 1}).narrow(1, 0, nbins);
}

// A histogram's non-zero bins as one flat array [bin, count, bin, count, ...]: a document's record
// holds a few hundred of them per head, and one JSON number per value keeps writing it cheap.
nlohmann::json sparse(const int64_t* counts, int64_t n) {
  nlohmann::json out(nlohmann::json::value_t::array);
  for (int64_t b = 0; b < n; ++b)
    if (counts[b] != 0) {
      out.push_back(b);
      out.push_back(counts[b]);
    }
  return out;
}

// Calls f(bin, count) for each pair of a sparse histogram.
template <typename F>
void for_each_bin(const nlohmann::json& hist, F&& f) {
  if (!hist.is_array() || hist.size() % 2 != 0) throw Error("inspect: a histogram must be a flat [bin, count, ...] array");
  for (size_t i = 0; i < hist.size(); i += 2) f(hist[i].get<int64_t>(), hist[i + 1].get<int64_t>());
}

void add_sparse(nlohmann::json& a, const nlohmann::json& b) {
  std::map<int64_t, int64_t> m;
  for_each_bin(a, [&](int64_t bin, int64_t count) { m[bin] += count; });
  for_each_bin(b, [&](int64_t bin, int64_t count) { m[bin] += count; });
  a = nlohmann::json::array();
  for (const auto& [bin, count] : m) {
    a.push_back(bin);
    a.push_back(count);
  }
}

std::string key(double v) { return fmt::format("{}", v); }

int64_t rank_of(double q, int64_t n) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(q * static_cast<double>(n)))); }

}  // namespace

int64_t gate_bin(double y) {
  if (!(y >= kGateLow)) return 0;
  if (y >= kGateHigh) return kGateBins - 1;
  const auto b = static_cast<int64_t>(std::floor((std::log10(y) + kGateLowExp) * kGateBinsPerDecade)) + 1;
  return std::clamp<int64_t>(b, 1, kGateBins - 2);
}

double gate_bin_value(int64_t bin) {
  if (bin <= 0) return 1.0;
  if (bin >= kGateBins - 1) return 0.0;
  return std::exp(-std::pow(10.0, (static_cast<double>(bin) - 0.5) / kGateBinsPerDecade - kGateLowExp));
}

int64_t reach_bin(int64_t r) {
  if (r <= kReachExact) return r;
  const auto b = static_cast<int64_t>(std::floor(std::log2(static_cast<double>(r) / kReachExact) * kReachBinsPerOctave)) +
                 kReachExact + 1;
  return std::min<int64_t>(b, kReachBins - 1);
}

int64_t reach_bin_value(int64_t bin) {
  if (bin <= kReachExact) return bin;
  return std::llround(kReachExact * std::exp2((static_cast<double>(bin - kReachExact - 1) + 0.5) / kReachBinsPerOctave));
}

at::Tensor pruned_keys(const at::Tensor& c, double tau) {
  // c never increases along T, so -c is sorted: #{j : c_j > c_i + tau} = #{j : -c_j < -(c_i + tau)}.
  return at::searchsorted(c.neg().contiguous(), (c + tau).neg().contiguous(), /*out_int32=*/false, /*right=*/false);
}

nlohmann::json layer_record(const at::Tensor& log_decay) {
  if (log_decay.dim() != 2 && log_decay.dim() != 3)
    throw Error(fmt::format("inspect: a log decay of {} dimensions (expected [T, H] or [T, H, K])", log_decay.dim()));
  at::Tensor x = log_decay.to(at::kDouble);
  if (x.dim() == 2) x = x.unsqueeze(-1);
  const int64_t T = x.size(0), H = x.size(1), K = x.size(2);
  x = x.permute({1, 2, 0}).contiguous();  // [H, K, T]
  std::vector<at::Tensor> parts;           // int64 [H, ...] pieces, moved to the host together
  at::Tensor sums = at::stack({x.exp().sum({1, 2}), x.sum({1, 2})});  // [2, H] float64
  std::vector<at::Tensor> above;
  for (double p : kGateThresholds) above.push_back((x > std::log(p)).sum({1, 2}));
  parts.push_back(at::stack(above));                       // [3, H]
  parts.push_back(per_head_hist(gate_bins(x), H, kGateBins).t());  // [bins, H]
  at::Tensor c = x.cumsum(-1).view({H * K, T});
  at::Tensor pos = at::arange(T, c.options().dtype(at::kLong)).view({1, 1, T});
  for (double tau : kTolerances) {
    at::Tensor idx = pruned_keys(c, tau).view({H, K, T});
    at::Tensor censored = (idx == 0);
    at::Tensor bins = at::where(censored, at::full_like(idx, -1), reach_bins(pos - idx + 1));
    parts.push_back(at::stack({idx.sum({1, 2}), censored.sum({1, 2})}));  // [2, H]
    parts.push_back(per_head_hist(bins, H, kReachBins).t());           // [bins, H]
  }
  const at::Tensor counts = at::cat(parts, 0).to(at::kCPU).t().contiguous();  // [H, rows]
  const at::Tensor host_sums = sums.to(at::kCPU).t().contiguous();            // [H, 2]
  const int64_t rows = counts.size(1);
  nlohmann::json out = nlohmann::json::array();
  for (int64_t h = 0; h < H; ++h) {
    const int64_t* row = counts.data_ptr<int64_t>() + h * rows;
    const double* s = host_sums.data_ptr<double>() + h * 2;
    nlohmann::json head = {{"n", K * T}, {"sum_a", s[0]}, {"sum_log", s[1]}, {"above", {row[0], row[1], row[2]}}};
    head["gate_hist"] = sparse(row + 3, kGateBins);
    nlohmann::json reach = nlohmann::json::array();
    int64_t off = 3 + kGateBins;
    for (int t = 0; t < kNumTolerances; ++t) {
      reach.push_back({{"queries", K * T},
                       {"pruned", row[off]},
                       {"censored", row[off + 1]},
                       {"pairs", K * T * (T + 1) / 2},
                       {"hist", sparse(row + off + 2, kReachBins)}});
      off += 2 + kReachBins;
    }
    head["reach"] = std::move(reach);
    out.push_back(std::move(head));
  }
  return out;
}

std::vector<nlohmann::json> layer_records(const std::vector<at::Tensor>& log_decays) {
  constexpr int64_t kMaxGroupValues = int64_t(1) << 25;
  std::vector<nlohmann::json> out;
  for (size_t first = 0; first < log_decays.size();) {
    size_t end = first + 1;
    int64_t values = log_decays[first].numel();
    while (end < log_decays.size() && values + log_decays[end].numel() <= kMaxGroupValues) values += log_decays[end++].numel();
    if (end - first == 1) {
      out.push_back(layer_record(log_decays[first]));
    } else {
      const std::vector<at::Tensor> group(log_decays.begin() + first, log_decays.begin() + end);
      nlohmann::json heads = layer_record(at::cat(group, 1));  // [T, layers x H(, K)]
      size_t h = 0;
      for (const at::Tensor& layer : group) {
        nlohmann::json one = nlohmann::json::array();
        for (int64_t i = 0; i < layer.size(1); ++i) one.push_back(std::move(heads.at(h++)));
        out.push_back(std::move(one));
      }
    }
    first = end;
  }
  return out;
}

void add_head_records(nlohmann::json& a, const nlohmann::json& b) {
  a["n"] = a["n"].get<int64_t>() + b.at("n").get<int64_t>();
  a["sum_a"] = a["sum_a"].get<double>() + b.at("sum_a").get<double>();
  a["sum_log"] = a["sum_log"].get<double>() + b.at("sum_log").get<double>();
  for (size_t i = 0; i < 3; ++i) a["above"][i] = a["above"][i].get<int64_t>() + b.at("above").at(i).get<int64_t>();
  add_sparse(a["gate_hist"], b.at("gate_hist"));
  for (size_t t = 0; t < static_cast<size_t>(kNumTolerances); ++t) {
    nlohmann::json& r = a["reach"][t];
    const nlohmann::json& s = b.at("reach").at(t);
    for (const char* k : {"queries", "pruned", "censored", "pairs"}) r[k] = r[k].get<int64_t>() + s.at(k).get<int64_t>();
    add_sparse(r["hist"], s.at("hist"));
  }
}

nlohmann::json head_summary(const nlohmann::json& head) {
  const int64_t n = head.at("n").get<int64_t>();
  if (n <= 0) throw Error("inspect: a head with no gate values");
  const double nd = static_cast<double>(n);
  std::vector<int64_t> hist(kGateBins, 0);
  for_each_bin(head.at("gate_hist"), [&](int64_t bin, int64_t count) { hist.at(static_cast<size_t>(bin)) += count; });
  nlohmann::json quant = nlohmann::json::object();
  for (double q : kGateQuantiles) {
    // The k-th smallest a is the k-th largest y: walk the bins from the top.
    const int64_t k = rank_of(q, n);
    int64_t cum = 0, bin = kGateBins - 1;
    for (; bin > 0; --bin) {
      cum += hist[bin];
      if (cum >= k) break;
    }
    quant[key(q)] = gate_bin_value(bin);
  }
  nlohmann::json above = nlohmann::json::object();
  for (size_t i = 0; i < 3; ++i) above[key(kGateThresholds[i])] = head.at("above").at(i).get<double>() / nd;
  nlohmann::json out = {{"n", n},
                        {"gate", {{"mean", head.at("sum_a").get<double>() / nd}, {"quantiles", quant}, {"frac_above", above}}},
                        {"mean_log_gate", head.at("sum_log").get<double>() / nd}};
  nlohmann::json reach = nlohmann::json::object();
  for (int t = 0; t < kNumTolerances; ++t) {
    const nlohmann::json& r = head.at("reach").at(t);
    const int64_t m = r.at("queries").get<int64_t>();
    std::vector<int64_t> rh(kReachBins, 0);
    for_each_bin(r.at("hist"), [&](int64_t bin, int64_t count) { rh.at(static_cast<size_t>(bin)) += count; });
    nlohmann::json rq = nlohmann::json::object();
    for (double q : kReachQuantiles) {
      const int64_t k = rank_of(q, m);
      int64_t cum = 0;
      nlohmann::json v = nullptr;  // among the censored queries: beyond the document
      for (int64_t bin = 0; bin < kReachBins; ++bin) {
        cum += rh[bin];
        if (cum >= k) {
          v = reach_bin_value(bin);
          break;
        }
      }
      rq[key(q)] = v;
    }
    reach[key(kTolerances[t])] = {{"median", rq["0.5"]},
                                  {"quantiles", rq},
                                  {"censored_fraction", r.at("censored").get<double>() / static_cast<double>(m)},
                                  {"prunable_fraction", r.at("pruned").get<double>() / r.at("pairs").get<double>()}};
  }
  out["reach"] = std::move(reach);
  return out;
}

}  // namespace foxeval::inspect
