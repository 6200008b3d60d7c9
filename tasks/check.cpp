#include "tasks/check.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

std::vector<CheckRow> check_against_baseline(const std::string& result_path, const std::string& baseline_path,
                                             double atol, double rtol) {
  const nlohmann::json result = read_json(result_path), baseline = read_json(baseline_path);
  std::vector<CheckRow> rows;
  auto within = [&](double b, double r) { return std::isfinite(r) && std::abs(r - b) <= atol + rtol * std::abs(b); };
  for (auto it = baseline.begin(); it != baseline.end(); ++it) {
    if (it.key().rfind("val/", 0) != 0) continue;
    CheckRow row;
    row.metric = it.key();
    if (!result.contains(it.key())) {
      row.problem = "missing";
      rows.push_back(row);
      continue;
    }
    const nlohmann::json& b = it.value();
    const nlohmann::json& r = result[it.key()];
    if (b.is_number()) {
      if (!r.is_number()) throw Error(fmt::format("{}: \"{}\" is not a number", result_path, it.key()));
      row.baseline = b.get<double>();
      row.result = r.get<double>();
      row.diff = row.result - row.baseline;
      row.ok = within(row.baseline, row.result);
    } else if (b.is_array()) {
      if (!r.is_array() || r.size() != b.size()) {
        row.problem = fmt::format("length {} vs {}", r.is_array() ? r.size() : 0, b.size());
        rows.push_back(row);
        continue;
      }
      row.ok = true;
      row.diff = -1;  // the first element is shown unless another differs more
      for (size_t i = 0; i < b.size(); ++i) {
        const double bv = b[i].is_number() ? b[i].get<double>() : NAN, rv = r[i].is_number() ? r[i].get<double>() : NAN;
        const double d = std::abs(rv - bv);
        if (!(d <= row.diff)) {  // keeps the worst element (NaN included), so the table shows it
          row.diff = d;
          row.baseline = bv;
          row.result = rv;
        }
        row.ok = row.ok && within(bv, rv);
      }
      if (row.diff < 0) row.diff = 0;  // an empty array
    } else {
      continue;  // strings and objects are not metrics
    }
    rows.push_back(row);
  }
  if (rows.empty()) throw Error(fmt::format("{}: no \"val/...\" metrics to check", baseline_path));
  return rows;
}

}  // namespace foxeval
