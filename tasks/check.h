// `foxeval check`: compares a result file with a committed baseline, metric by metric, so CI
// catches regressions. Every numeric "val/..." metric of the baseline must be present in the
// result and within tolerance; arrays (val/loss_per_token) are compared element-wise.
#pragma once
#include <string>
#include <vector>

namespace foxeval {

struct CheckRow {
  std::string metric;
  double baseline = 0, result = 0, diff = 0;  // for arrays: diff = the largest element difference
  bool ok = false;
  std::string problem;  // "missing", "length differs", ...
};

// atol + rtol * |baseline| is the allowed difference per value.
std::vector<CheckRow> check_against_baseline(const std::string& result_path, const std::string& baseline_path,
                                             double atol, double rtol);

}  // namespace foxeval
