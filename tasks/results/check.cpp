#include "tasks/results/check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/run/identity.h"
#include "tasks/results/metric_direction.h"
#include "tasks/task_def.h"

namespace foxeval {
namespace {

// Not metrics: what a run took and where, rather than what it computed.
const std::set<std::string> kNotMetrics = {"header",  "identity",       "model_info",   "settings",
                                           "elapsed_s", "tokens_per_s", "data_wait_s", "seconds_per_document",
                                           "peak_gpu_memory_bytes", "timing", "merged_from", "kind"};
// Content digests of what a run read (tasks/run/identity.h): compared when both files have them; a file
// made before foxeval recorded them is compared on the rest, and check says so.
const std::vector<std::pair<std::string, std::string>> kContentDigests = {{"model_digest", "model"},
                                                                          {"data_digest", "data"}};

// How a loss run's data was stored, from its description ("npy:PATH dtype=..." -> "npy", "zarr:..."
// -> "zarr"; data/token_rows.h describe()); "" for anything else.
std::string storage_format(const nlohmann::json& data) {
  if (!data.is_string()) return "";
  const std::string s = data.get<std::string>();
  for (const char* format : {"npy", "zarr"})
    if (s.rfind(std::string(format) + ":", 0) == 0) return format;
  return "";
}

// "fnv1a64:0123..." or "sha256:abcd...": the algorithm of a digest string, or "" for any other value.
std::string digest_algorithm(const nlohmann::json& v) {
  if (!v.is_string()) return "";
  const std::string s = v.get<std::string>();
  for (const char* algo : {"fnv1a64:", "sha256:"})
    if (s.rfind(algo, 0) == 0 && s.size() > std::strlen(algo) &&
        s.find_first_not_of("0123456789abcdef", std::strlen(algo)) == std::string::npos)
      return std::string(algo, std::strlen(algo) - 1);
  return "";
}

// Settings `b` (baseline) and `r` (result) compared leaf by leaf: differences as "path: b vs r";
// two digests of different algorithms (a file made before the SHA-256 digests) cannot be compared:
// a note, not a difference.
void compare_settings(const nlohmann::json& b, const nlohmann::json& r, const std::string& path,
                      std::vector<std::string>& differ, std::vector<std::string>& not_comparable) {
  if (b.is_object() && r.is_object()) {
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string p = path.empty() ? it.key() : path + "/" + it.key();
      if (r.contains(it.key()))
        compare_settings(it.value(), r[it.key()], p, differ, not_comparable);
      else
        differ.push_back(fmt::format("{}: {} vs absent", p, it.value().dump()));
    }
    for (auto it = r.begin(); it != r.end(); ++it)
      if (!b.contains(it.key()))
        differ.push_back(fmt::format("{}: absent vs {}", path.empty() ? it.key() : path + "/" + it.key(), it.value().dump()));
    return;
  }
  const std::string ab = digest_algorithm(b), ar = digest_algorithm(r);
  if (!ab.empty() && !ar.empty() && ab != ar) {
    not_comparable.push_back(fmt::format("{} ({} vs {})", path, ab, ar));
    return;
  }
  if (b != r) differ.push_back(fmt::format("{}: {} vs {}", path, b.dump(), r.dump()));
}

// How long something took, at any depth ("this_run", "decode_s", "prefill_tokens_per_s", ...).
bool is_timing(const std::string& key) {
  auto ends = [&](const char* suffix) {
    const std::string x(suffix);
    return key.size() >= x.size() && key.compare(key.size() - x.size(), x.size(), x) == 0;
  };
  return key == "this_run" || ends("_s") || ends("_per_s") || ends("_seconds") || ends("_bytes");
}

void flatten(const nlohmann::json& j, const std::string& path, std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (j.is_number() || j.is_boolean()) {
    out.emplace_back(path, j.is_boolean() ? nlohmann::json(j.get<bool>() ? 1.0 : 0.0) : j);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (path.empty() && kNotMetrics.count(it.key())) continue;
      if (is_timing(it.key())) continue;
      flatten(it.value(), path.empty() ? it.key() : path + "/" + it.key(), out);
    }
  } else if (j.is_array()) {
    bool numbers = !j.empty();
    for (const auto& e : j) numbers = numbers && (e.is_number() || e.is_null());
    if (numbers) {
      out.emplace_back(path, j);
    } else {
      for (size_t i = 0; i < j.size(); ++i) flatten(j[i], path + "/" + std::to_string(i), out);
    }
  }
  // strings and nulls are not metrics (predictions are judged by the scores they get)
}

// header.task; "" for a result without one (an official file): any task's rules apply.
std::string result_task(const nlohmann::json& result) {
  const nlohmann::json* h = result.contains("header") ? &result["header"] : nullptr;
  return h && h->is_object() && h->contains("task") && (*h)["task"].is_string() ? (*h)["task"].get<std::string>() : "";
}

std::string last_component(const std::string& metric) {
  const auto slash = metric.rfind('/');
  return slash == std::string::npos ? metric : metric.substr(slash + 1);
}

}  // namespace

std::string check_status(const CheckRow& row) {
  if (!row.problem.empty()) return row.problem;
  if (row.ok) return "ok";
  switch (row.change) {
    case Change::Improved: return "improved";
    case Change::Worsened: return "WORSENED";
    default: return "CHANGED";
  }
}

std::vector<std::pair<std::string, nlohmann::json>> result_metrics(const nlohmann::json& result) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  flatten(result, "", out);
  return out;
}

nlohmann::json result_settings(const nlohmann::json& result) {
  nlohmann::json s = result.contains("header") ? result["header"].value("settings", nlohmann::json::object())
                                               : result.value("identity", nlohmann::json::object());
  if (!s.is_object()) return nlohmann::json::object();
  for (const std::string& k : identity_information_keys()) s.erase(k);
  return s;
}

namespace {

// The content-digest rule at one level of the settings and, below it, in every object both files
// hold under the same key: a task may nest what it read (inspect's "source": {data, data_digest}),
// and a nested description's path is information exactly as a top-level one is.
void settle_content_digests(nlohmann::json& rs, nlohmann::json& bs, const std::string& where,
                            std::vector<std::string>& notes) {
  const std::string at = where.empty() ? "" : " (" + where + ")";
  for (const auto& [digest, what] : kContentDigests) {
    const bool in_r = rs.contains(digest), in_b = bs.contains(digest);
    if (in_r && in_b) {
      // Both say what they read: where it lay (a path, or a description holding one) is information.
      if (digest == "data_digest") {
        const std::string format_r = storage_format(rs.value("data", nlohmann::json())),
                          format_b = storage_format(bs.value("data", nlohmann::json()));
        if (rs[digest] != bs[digest] && !format_r.empty() && !format_b.empty() && format_r != format_b)
          notes.push_back(fmt::format(
              "the data digests{} differ, and the baseline read {} data while the result read {}: a data digest "
              "covers the files as stored (a .npy's header and rows; a zarr array's .zarray and compressed chunks), "
              "so the same tokens stored both ways digest differently. If both hold the same tokens, compare with "
              "--ignore-settings",
              at, format_b, format_r));
        rs.erase("data");
        bs.erase("data");
      }
    } else if (in_r != in_b) {
      notes.push_back(fmt::format("the {} has no {}{} (made before foxeval recorded content digests): the {} is "
                                  "compared by the other settings only",
                                  in_r ? "baseline" : "result", digest, at, what));
      rs.erase(digest);
      bs.erase(digest);
    }
  }
  for (auto it = rs.begin(); it != rs.end(); ++it)
    if (it->is_object() && bs.contains(it.key()) && bs[it.key()].is_object())
      settle_content_digests(*it, bs[it.key()], where.empty() ? it.key() : where + "/" + it.key(), notes);
}

}  // namespace

SettingsComparison compare_result_settings(const nlohmann::json& result, const nlohmann::json& baseline) {
  SettingsComparison c;
  nlohmann::json rs = result_settings(result), bs = result_settings(baseline);
  settle_content_digests(rs, bs, "", c.notes);
  std::vector<std::string> not_comparable;
  compare_settings(bs, rs, "", c.differ, not_comparable);
  if (!not_comparable.empty()) {
    std::string list;
    for (const std::string& p : not_comparable) list += (list.empty() ? "" : ", ") + p;
    c.notes.push_back(fmt::format("digests of different algorithms (one file predates foxeval's SHA-256 digests), "
                                  "so that content is not compared: {}",
                                  list));
  }
  return c;
}

std::pair<double, double> default_tolerance(const std::string& path, const std::string& task) {
  // per_item/METRIC/values: an item's value of METRIC, held to METRIC's tolerance; its stderr too.
  std::string metric = path;
  const std::string prefix = "per_item/";
  if (metric.rfind(prefix, 0) == 0) {
    const std::string last = last_component(metric);
    if (last == "stderr") return {0.0, 1e-5};
    if (last == "values") metric = metric.substr(prefix.size(), metric.size() - prefix.size() - last.size() - 1);
  }
  if (const auto t = task_metric_tolerance(task, metric)) return *t;
  // A standard error is foxeval's own arithmetic over the values, whatever the task.
  if (last_component(metric).find("stderr") != std::string::npos) return {0.0, 1e-5};
  return {0.0, 0.0};
}

std::pair<double, double> default_tolerance(const std::string& metric) { return default_tolerance(metric, ""); }

CheckReport check_against_baseline(const std::string& result_path, const std::string& baseline_path,
                                   const CheckOptions& options) {
  const nlohmann::json result = read_json(result_path), baseline = read_json(baseline_path);
  for (const auto& [j, path] : {std::pair<const nlohmann::json&, const std::string&>{result, result_path},
                                std::pair<const nlohmann::json&, const std::string&>{baseline, baseline_path}})
    if (!j.is_object() || (j.contains("header") && !j["header"].is_object()))
      throw Error(fmt::format("{}: not a foxeval result (a JSON object with a header expected)", path));
  CheckReport report;
  SettingsComparison settings = compare_result_settings(result, baseline);
  report.settings_differ = std::move(settings.differ);
  report.notes = std::move(settings.notes);

  // The task's directions and tolerances (tasks/task_def.h); none named: any task's rules.
  const std::string task = result_task(result);
  auto tolerance_of = [&](const std::string& metric, double base) {
    for (const auto& [pattern, tol] : options.tolerances)
      if (glob_match(pattern, metric)) return tol;
    if (options.atol >= 0 || options.rtol >= 0)
      return std::max(0.0, options.atol) + std::max(0.0, options.rtol) * std::abs(base);
    const auto [abs_tol, rel_tol] = default_tolerance(metric, task);
    return abs_tol + rel_tol * std::abs(base);
  };
  auto number = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : NAN; };

  std::map<std::string, nlohmann::json> now;
  for (auto& [k, v] : result_metrics(result)) now[k] = v;
  std::set<std::string> seen;
  for (const auto& [metric, b] : result_metrics(baseline)) {
    seen.insert(metric);
    CheckRow row;
    row.metric = metric;
    auto found = now.find(metric);
    if (found == now.end()) {
      row.problem = "missing";
      row.baseline = b.is_array() ? NAN : number(b);
      row.result = NAN;
      report.rows.push_back(row);
      continue;
    }
    const nlohmann::json& r = found->second;
    if (b.is_array() != r.is_array() || (b.is_array() && b.size() != r.size())) {
      row.problem = fmt::format("length {} vs {}", r.is_array() ? r.size() : 1, b.is_array() ? b.size() : 1);
      report.rows.push_back(row);
      continue;
    }
    row.direction = metric_direction(metric, task);
    // How far `rv` is worse than `bv` by the direction (> 0 worse, < 0 better, NaN: no direction
    // or not numbers).
    auto worsening = [&](double bv, double rv) -> double {
      if (row.direction == Direction::None || std::isnan(bv) || std::isnan(rv)) return NAN;
      return row.direction == Direction::Higher ? bv - rv : rv - bv;
    };
    auto change_of = [&](double bv, double rv) {
      const double w = worsening(bv, rv);
      return std::isnan(w) ? Change::Changed : w > 0 ? Change::Worsened : Change::Improved;
    };
    if (!b.is_array()) {
      row.baseline = number(b);
      row.result = number(r);
      row.diff = row.result - row.baseline;
      row.tolerance = tolerance_of(metric, row.baseline);
      row.ok = std::abs(row.diff) <= row.tolerance || (std::isnan(row.baseline) && std::isnan(row.result));
      if (!row.ok) row.change = change_of(row.baseline, row.result);
    } else {
      row.ok = true;
      row.diff = -1;
      double worst = -1;  // the largest worsening beyond tolerance seen
      for (size_t i = 0; i < b.size(); ++i) {
        const double bv = number(b[i]), rv = number(r[i]);
        const double d = std::abs(rv - bv), tol = tolerance_of(metric, bv);
        const bool ok = d <= tol || (std::isnan(bv) && std::isnan(rv));
        const double w = worsening(bv, rv);
        const bool worse = !ok && w > 0;
        // Keep the element that worsened most; while none did, the one that moved most (a
        // failing one before any within tolerance).
        const bool keep = worse ? w > worst : worst < 0 && (!(d <= row.diff) || (!ok && row.ok));
        if (keep) {
          row.diff = d;
          row.baseline = bv;
          row.result = rv;
          row.tolerance = tol;
          row.position = static_cast<int64_t>(i);
          if (worse) worst = w;
        }
        if (!ok) {
          const Change c = change_of(bv, rv);
          if (row.change == Change::None || c == Change::Worsened || (c == Change::Changed && row.change == Change::Improved))
            row.change = c;
        }
        row.ok = row.ok && ok;
      }
      if (row.diff < 0) row.diff = 0;
    }
    report.rows.push_back(row);
  }
  for (const auto& [metric, v] : now) {
    if (seen.count(metric)) continue;
    CheckRow row;
    row.metric = metric;
    row.problem = "extra";
    row.baseline = NAN;
    row.result = v.is_array() ? NAN : number(v);
    report.rows.push_back(row);
  }
  if (report.rows.empty()) throw Error(fmt::format("{}: no metrics to check", baseline_path));
  return report;
}

}  // namespace foxeval
