// `foxeval plot niah`: the paper's NIAH figure (official plot_niah.py) as a self-contained SVG:
// one panel per result, depth percent on y (0 at the top), document length on x, the score's
// colour from #F0496E (1) through #EBB839 to #0CD79F (10), as the official colour map, and an
// optional dashed line at the training context length (placed between the columns around it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace foxeval::niah {

struct HeatmapPanel {
  std::string title;
  std::vector<int64_t> lengths, depths;    // sorted
  std::vector<std::vector<double>> score;  // [depth][length]; NaN where the grid has no cell
};

// The cells of a `foxeval niah run|score` result: "score" (or "judge_score" with `judge`),
// averaged where a cell repeats. Title: `label`, else the model folder's name, then the mode.
// Errors name the file (unreadable, no cells, no judge scores).
HeatmapPanel read_heatmap_panel(const std::string& file, const std::string& label, bool judge);

// "#rrggbb" of a score on the official colour map (clamped to 1..10).
std::string score_colour(double score);

// Fonts: the official figure's serif by default; the report passes font_family "" so that the
// SVG inherits the page's font, at the page's size.
struct HeatmapStyle {
  std::string font_family = "serif";  // "": none given (inline in a page: the page's)
  double label_size = 12, axis_size = 15, title_size = 18;
};

// Panels side by side, each as wide as its grid (a fixed cell size), and one colour bar.
std::string heatmap_svg(const std::vector<HeatmapPanel>& panels, int64_t train_length, const HeatmapStyle& style = {});

// Reads the files, draws, writes `out` atomically.
void plot_niah_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, bool judge, int64_t train_length);

}  // namespace foxeval::niah
