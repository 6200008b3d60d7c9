// Figures as self-contained SVG (no plotting library): curves over token positions on a log-x
// axis (as the FoX paper's per-token figures) and grouped bars of a results table. The tasks
// choose what to draw (tasks/<task>/...); nothing here knows a task.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/json_file.h"
#include "tasks/results/results_table.h"

namespace foxeval {

struct PlotSeries {
  std::string label;
  std::vector<double> values;  // values[i] is the value at token position i + 1
};

struct PlotOptions {
  std::string title;                // drawn above the plot when not empty
  std::string x_title = "Token position";
  std::string y_title;              // the quantity drawn
  std::optional<double> ymin, ymax;  // y-axis range; each end defaults to the data's (padded)
  int bins = 200;                    // log-spaced smoothing bins over positions 1..N
  int width = 800, height = 500;     // SVG size in pixels
  std::optional<double> train_length;  // a dashed vertical line at this position: the training context length
};

// One smoothed point: `position` is the geometric mean of the positions averaged, `value` their mean.
struct SmoothedPoint {
  double position;
  double value;
};

// Smoothing, as the paper's windowed averages: positions 1..N are split into `bins` bins with
// log-spaced edges (N + 1)^(k / bins), k = 0..bins, and each non-empty bin becomes one point,
// the mean value of its positions at the geometric mean of its positions. Early bins hold single
// positions (drawn as they are); late bins average hundreds, so the window grows with position
// and the curve is equally smooth along the log-x axis. Non-finite values are left out of the
// means; bins with no finite value give no point.
std::vector<SmoothedPoint> smooth_log_bins(const std::vector<double>& values, int bins);

// The SVG text of the figure: one <polyline> per series, in order, and a legend. Throws
// foxeval::Error for no series, an empty series, or --ymin not below --ymax.
std::string line_plot_svg(const std::vector<PlotSeries>& series, const PlotOptions& opts);

struct BarChartOptions {
  std::string y_label;  // the y axis' title ("Score (0-100)")
};

// A table's values as grouped bars: one group per column (summary columns such as Avg set apart
// after a gap and a dashed rule), one bar per row in the legend's colours; y axis with ticks and
// `y_label`; a zero is a thin mark at the axis, a missing value a dash.
std::string bar_chart_svg(const results::Table& table, const BarChartOptions& options);

// A score chart as RULER's and BABILong's figures draw it: percent (0-100, a rule every 20) over
// labelled x positions, one line with markers per series, the legend at the right. A point's x is
// on the axis' own scale, 0 to x_span (a length's index, or log2 of a length less the shortest's).
struct PercentPoint {
  double x;
  double value;  // a fraction: drawn as 100 x value
};
struct PercentSeries {
  std::string label;
  std::vector<PercentPoint> points;
};
struct PercentChart {
  std::string title;  // drawn above when not empty
  std::string x_title, y_title;
  double x_span = 1;
  std::vector<std::pair<double, std::string>> x_ticks;  // (x, its label)
};
std::string percent_chart_svg(const PercentChart& chart, const std::vector<PercentSeries>& series);

// A result's name in a figure: `label` when given, else its model folder's name, else the file's stem.
std::string series_label(const std::string& label, const std::string& model, const std::string& file);

// `foxeval plot`'s --label check: one label per file, or none (foxeval::Error).
void check_plot_labels(const std::vector<std::string>& labels, const std::vector<std::string>& files);

// `foxeval plot` of several result files into one figure: the labels checked (check_plot_labels),
// file i read as read(its JSON, its --label or "", `what`, its path) into a series, and
// svg(the series, title) written atomically to `out` (BABILong's and RULER's score curves).
template <class Series>
void plot_result_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                       const std::string& what, const std::string& out,
                       Series (*read)(const nlohmann::json&, const std::string&, const std::string&, const std::string&),
                       std::string (*svg)(const std::vector<Series>&, const std::string&), const std::string& title) {
  check_plot_labels(labels, files);
  std::vector<Series> series;
  for (std::size_t i = 0; i < files.size(); ++i)
    series.push_back(read(read_json(files[i]), labels.empty() ? std::string() : labels[i], what, files[i]));
  write_text_atomic(out, svg(series, title));
}

// The i-th colour of matplotlib's tab10, as the curves and bars use them.
std::string plot_colour(std::size_t i);

// Text for SVG/HTML content and attributes: & < > " ' escaped (plots, heatmaps, the report).
std::string xml_escape(const std::string& s);

}  // namespace foxeval
