// `foxeval compare A B [C ...]`: B (and C, ...) against A, metric by metric, paired on the items
// both results hold (documents, records, cells: their "per_item", tasks/results/item_stats.h).
//
// Per metric: n, A's and B's value over the shared items, B - A, its paired 95% interval (paired
// bootstrap, fixed seed; McNemar's exact p beside it for 0/1 items), and a verdict by the metric's
// direction (tasks/results/metric_direction.h): "better" / "worse" (or "differs" for a metric without a
// direction) only where the interval excludes 0, else "no clear difference".
// Refused (foxeval::Error, exit 2): results of different tasks, made on different data (a data
// digest, the data description, the NIAH needle differ), or on different item sets unless
// `intersect` (then the shared items only, with the counts left out named).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/results/item_stats.h"
#include "tasks/results/metric_direction.h"

namespace foxeval {

struct CompareOptions {
  bool intersect = false;
  uint64_t seed = 1234;
  int64_t resamples = 10000;
};

struct MetricComparison {
  std::string metric;
  Direction direction = Direction::None;
  PairedDifference paired;
  bool excludes_zero = false;  // the interval lies entirely on one side of 0
  std::string verdict;         // "better", "worse", "differs", "no clear difference"
  int64_t only_a = 0, only_b = 0;  // items left out (with intersect)
};

struct FileComparison {
  std::string a_path, b_path, a_label, b_label, task;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> notes;  // settings that differ (not the data), metrics only one side has
};

FileComparison compare_result_files(const std::string& a_path, const std::string& b_path, const std::string& a_label,
                                    const std::string& b_label, const CompareOptions& options);

// The pairs to compare: two files, or two folders (suite outputs: OUT/MODEL) paired by the
// relative paths of their .json results; a file only one folder has is named in `unpaired`.
std::vector<std::pair<std::string, std::string>> compare_pairs(const std::string& a, const std::string& b,
                                                               std::vector<std::string>* unpaired);

std::string render_comparisons_markdown(const std::vector<FileComparison>& comparisons, const CompareOptions& options);
nlohmann::json comparisons_json(const std::vector<FileComparison>& comparisons, const CompareOptions& options);

}  // namespace foxeval
