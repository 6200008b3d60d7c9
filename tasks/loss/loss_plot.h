// `foxeval plot loss`: per-token loss against token position (log-scale x), as the FoX paper's
// per-token loss figure (the curves are tasks/results/plot's).
#pragma once
#include <string>
#include <vector>

#include "tasks/results/plot.h"

namespace foxeval {

// Reads "val/loss_per_token" of a result file written by `foxeval loss`. The label is `label`
// when not empty, else the basename of result["identity"]["model"], else the file's name
// without ".json". Errors (unreadable file, malformed JSON, missing or empty array) name the file.
PlotSeries read_loss_series(const std::string& file, const std::string& label = "");

// The figure of loss curves: line_plot_svg with the loss axis titled.
std::string loss_plot_svg(const std::vector<PlotSeries>& series, PlotOptions opts);

// `foxeval plot loss`: labels[i] (when given) names files[i]; the SVG is written atomically
// (OUT.tmp, then renamed to OUT).
void plot_loss_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, const PlotOptions& opts);

}  // namespace foxeval
