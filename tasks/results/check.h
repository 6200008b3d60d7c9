// `foxeval check`: compares a result file with a committed baseline, metric by metric, for every
// result kind (loss, niah, longbench, lm-eval), so CI catches a change that moves any number.
//
// Metrics are the numeric leaves of a result outside its header (paths joined with '/', e.g.
// "results/piqa/acc,none", "cells/3/score", "val/loss_avg_len_512"); arrays of numbers
// (val/loss_per_token) compare element-wise. Timings and machine facts are not metrics (keys
// "this_run" and "..._s", "..._per_s", "..._seconds", "..._bytes" at any depth).
// Default tolerances (allowed |now - baseline|): each task declares its own in its definition
// (tasks/task_def.h: loss's val/loss* 1e-4 absolute; perplexities and bits_per_byte 1e-5 relative,
// as CPU float32 kernels may round differently on another CPU's vector width); standard errors
// 1e-5 relative; everything else (scores, accuracies, counts) 0 - on the same device the
// predictions and log-likelihoods are deterministic, and these are functions of them. For GPU
// bf16 runs pass --tol (see README: 2e-3 on losses, 1e-3 relative on perplexities, one item's
// worth on scores).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tasks/results/metric_direction.h"

namespace foxeval {

// How a metric beyond its tolerance moved, by its direction (tasks/results/metric_direction.h).
enum class Change { None, Improved, Worsened, Changed };  // Changed: a metric without a direction

struct CheckRow {
  std::string metric;
  double baseline = 0, result = 0, diff = 0;  // for arrays: the element that differs most
  double tolerance = 0;
  bool ok = false;
  std::string problem;  // "missing", "extra", "length differs", ...
  Direction direction = Direction::None;
  // Beyond tolerance: improved or worsened by the direction. For an array (a per-position curve)
  // worsened when any element beyond tolerance worsened, and `position` names the element shown:
  // the one that worsened most (else the one that moved most); -1 for a number.
  Change change = Change::None;
  int64_t position = -1;
};

// "ok", "improved", "WORSENED", "CHANGED" or the row's problem.
std::string check_status(const CheckRow& row);

struct CheckOptions {
  // METRIC=ABS overrides; METRIC is a metric path, or a pattern with '*' (any characters).
  std::vector<std::pair<std::string, double>> tolerances;
  double atol = -1, rtol = -1;  // >= 0: one tolerance for every metric (the older --atol/--rtol)
};

struct CheckReport {
  std::vector<CheckRow> rows;
  // Settings that change numbers and differ between the two files ("key: baseline vs result";
  // nested settings by path, e.g. "data/piqa/digest: ..."). Models and data count by content: a
  // differing "model_digest" is other weights or config, a differing "data_digest" (or another
  // data digest) other data, whatever their paths.
  std::vector<std::string> settings_differ;
  // What could not be compared, and why (a file made before content digests were recorded).
  std::vector<std::string> notes;
};

struct SettingsComparison {
  std::vector<std::string> differ, notes;
};

// The settings of `result` against `baseline`'s, as check compares them:
//  * where things lie (identity_information_keys(): the model folder, data folders, how a digest was
//    found) never counts; the model and data count by their content digests;
//  * when both have a data_digest, "data" (a description holding the path) is information too, at
//    any depth (a task may nest what it read: inspect's "source");
//  * a content digest only one file has (the other made before foxeval recorded them) is left out,
//    with a note: that file's model (or data) is compared by what both record (model_type and
//    num_parameters; a loss run's data description, path included);
//  * two digests of different algorithms (an older fnv1a64 against a sha256) are not compared, with a note.
SettingsComparison compare_result_settings(const nlohmann::json& result, const nlohmann::json& baseline);

CheckReport check_against_baseline(const std::string& result_path, const std::string& baseline_path,
                                   const CheckOptions& options);

// The metrics of a result (flattened as described above); arrays of numbers stay arrays.
std::vector<std::pair<std::string, nlohmann::json>> result_metrics(const nlohmann::json& result);

// The settings of a result that change numbers: header.settings (or a loss result's identity)
// without where things live on this machine (model/data directories, which CI's clone moves) and
// how digests were found (tasks/run/identity.h: identity_information_keys).
nlohmann::json result_settings(const nlohmann::json& result);

// The default tolerance of a metric of a result of `task` ("", and the first form: any task's
// rule): {absolute, relative}.
std::pair<double, double> default_tolerance(const std::string& metric, const std::string& task);
std::pair<double, double> default_tolerance(const std::string& metric);

}  // namespace foxeval
