// `foxeval plot loss`: per-token loss against token position (log-scale x), as the FoX paper's
// per-token loss figure, drawn as a self-contained SVG (no plotting library).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace foxeval {

struct PlotSeries {
  std::string label;
  std::vector<double> loss;  // loss[i] is the loss at token position i + 1
};

struct PlotOptions {
  std::string title;                // drawn above the plot when not empty
  std::optional<double> ymin, ymax;  // y-axis range; each end defaults to the data's (padded)
  int bins = 200;                    // log-spaced smoothing bins over positions 1..seq_len
  int width = 800, height = 500;     // SVG size in pixels
};

// One smoothed point: `position` is the geometric mean of the positions averaged, `loss` their mean.
struct SmoothedPoint {
  double position;
  double loss;
};

// Smoothing, as the paper's windowed averages: positions 1..N are split into `bins` bins with
// log-spaced edges (N + 1)^(k / bins), k = 0..bins, and each non-empty bin becomes one point,
// the mean loss of its positions at the geometric mean of its positions. Early bins hold single
// positions (drawn as they are); late bins average hundreds, so the window grows with position
// and the curve is equally smooth along the log-x axis. Non-finite losses are left out of the
// means; bins with no finite loss give no point.
std::vector<SmoothedPoint> smooth_log_bins(const std::vector<double>& loss, int bins);

// The SVG text of the figure: one <polyline> per series, in order. Throws foxeval::Error for
// no series, an empty series, or --ymin not below --ymax.
std::string loss_plot_svg(const std::vector<PlotSeries>& series, const PlotOptions& opts);

// Reads "val/loss_per_token" of a result file written by `foxeval loss`. The label is `label`
// when not empty, else the basename of result["identity"]["model"], else the file's name
// without ".json". Errors (unreadable file, malformed JSON, missing or empty array) name the file.
PlotSeries read_loss_series(const std::string& file, const std::string& label = "");

// `foxeval plot loss`: labels[i] (when given) names files[i]; the SVG is written atomically
// (OUT.tmp, then renamed to OUT).
void plot_loss_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, const PlotOptions& opts);

// Text for SVG/HTML content and attributes: & < > " ' escaped (plots, heatmaps, the report).
std::string xml_escape(const std::string& s);

}  // namespace foxeval
