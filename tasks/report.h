// `foxeval report`: one self-contained HTML page over result files of any task: the tables of
// `foxeval table`, the loss-per-position curves (tasks/plot), the NIAH heatmaps
// (tasks/niah/heatmap), LongBench per task as grouped bars, and every result's header. No network:
// CSS and SVG are inline, there is no script, no font or image to fetch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/results_table.h"

namespace foxeval::report {

struct ReportOptions {
  std::string title = "foxeval report";
  int64_t niah_train_length = 0;  // a dashed line in the NIAH heatmaps past this length (0: none)
};

// The page. Sections appear for the kinds present; each table sits in a `div.table-box`, each
// figure in a `figure.figure-box` (the ids name them: table-lm-eval, figure-loss, ...).
std::string render_report(const std::vector<results::ResultFile>& results, const ReportOptions& options);

// The LongBench scores of a table as grouped bars (one group per task and Avg, one bar per model).
std::string longbench_bars_svg(const results::Table& table);

// Reads the files (labels: one per file, or none), renders, writes `out` atomically.
void write_report(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                  const std::string& out, const ReportOptions& options);

}  // namespace foxeval::report
