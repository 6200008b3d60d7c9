#include "tasks/niah/heatmap.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/niah/niah_task.h"
#include "tasks/results/plot.h"

namespace fs = std::filesystem;

namespace foxeval::niah {
namespace {

}  // namespace

HeatmapPanel read_heatmap_panel(const std::string& file, const std::string& label, bool judge) {
  const nlohmann::json r = read_json(file);
  if (!r.contains("cells") || !r["cells"].is_array() || r["cells"].empty())
    throw Error(fmt::format("{}: no 'cells' (not a `foxeval niah` result?)", file));
  const char* key = judge ? "judge_score" : "score";
  std::map<std::pair<int64_t, int64_t>, std::pair<double, int>> sums;
  HeatmapPanel p;
  for (const nlohmann::json& c : r["cells"]) {
    if (!c.contains(key) || !c.contains("length") || !c.contains("depth"))
      throw Error(fmt::format("{}: a cell without length, depth or {}{}", file, key,
                              judge ? " (score it with --judge-url first)" : ""));
    const int64_t L = c["length"].get<int64_t>(), D = c["depth"].get<int64_t>();
    auto& s = sums[{D, L}];
    s.first += c[key].get<double>();
    s.second += 1;
    p.lengths.push_back(L);
    p.depths.push_back(D);
  }
  for (auto* v : {&p.lengths, &p.depths}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  p.score.assign(p.depths.size(), std::vector<double>(p.lengths.size(), std::nan("")));
  for (size_t i = 0; i < p.depths.size(); ++i)
    for (size_t j = 0; j < p.lengths.size(); ++j) {
      auto it = sums.find({p.depths[i], p.lengths[j]});
      if (it != sums.end()) p.score[i][j] = it->second.first / it->second.second;
    }
  std::string name = label;
  if (name.empty() && r.contains("model") && r["model"].is_string()) name = fs::path(r["model"].get<std::string>()).filename().string();
  if (name.empty()) name = fs::path(file).stem().string();
  p.title = r.contains("mode") && r["mode"].is_string() ? name + ", " + r["mode"].get<std::string>() : name;
  return p;
}

std::string score_colour(double score) {
  // LinearSegmentedColormap over three colours at 0, 0.5, 1 of the range vmin=1..vmax=10.
  static const int stops[3][3] = {{0xF0, 0x49, 0x6E}, {0xEB, 0xB8, 0x39}, {0x0C, 0xD7, 0x9F}};
  const double t = std::clamp((score - 1.0) / 9.0, 0.0, 1.0);
  const int seg = t < 0.5 ? 0 : 1;
  const double u = (t - 0.5 * seg) / 0.5;
  int rgb[3];
  for (int k = 0; k < 3; ++k)
    rgb[k] = static_cast<int>(std::lround(stops[seg][k] + (stops[seg + 1][k] - stops[seg][k]) * u));
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

std::string heatmap_svg(const std::vector<HeatmapPanel>& panels, int64_t train_length, const HeatmapStyle& style) {
  if (panels.empty()) throw Error("plot niah: no result given");
  const double cell_w = 38, cell_h = 26, left = 80, top = 46, bottom = 92, gap = 40;
  double width = 0, height = 0;
  for (const HeatmapPanel& p : panels) {
    width += left + cell_w * p.lengths.size() + (&p == &panels.back() ? 0 : gap);
    height = std::max(height, top + cell_h * p.depths.size() + bottom);
  }
  width += 70;  // colour bar
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\"{}>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, style.font_family.empty() ? "" : " font-family=\"" + xml_escape(style.font_family) + "\"");
  double x0 = 0;
  for (const HeatmapPanel& p : panels) {
    const double gx = x0 + left, gw = cell_w * p.lengths.size(), gh = cell_h * p.depths.size();
    svg += fmt::format("<text x=\"{:.1f}\" y=\"28\" font-size=\"{}\" text-anchor=\"middle\">{}</text>\n", gx + gw / 2,
                       style.title_size, xml_escape(p.title));
    for (size_t i = 0; i < p.depths.size(); ++i) {
      for (size_t j = 0; j < p.lengths.size(); ++j) {
        const double v = p.score[i][j];
        const std::string fill = std::isnan(v) ? "#dddddd" : score_colour(v);
        svg += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"white\" "
            "stroke-width=\"0.5\"><title>length {}, depth {}%: {}</title></rect>\n",
            gx + cell_w * j, top + cell_h * i, cell_w, cell_h, fill, p.lengths[j], p.depths[i],
            std::isnan(v) ? std::string("no cell") : fmt::format("{:.2f}", v));
      }
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"end\">{}</text>\n", gx - 6,
                         top + cell_h * (i + 0.5) + 4, style.label_size, p.depths[i]);
    }
    for (size_t j = 0; j < p.lengths.size(); ++j) {
      const double cx = gx + cell_w * (j + 0.5), cy = top + gh + 8;
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"end\" transform=\"rotate(-45 {:.1f} {:.1f})\">{}</text>\n",
          cx, cy + 4, style.label_size, cx, cy, p.lengths[j]);
    }
    if (train_length > 0 && p.lengths.size() > 1 && train_length >= p.lengths.front() && train_length <= p.lengths.back()) {
      // At the training length on the axis of column centres, interpolated between the two
      // lengths around it (the paper's line for 16384 runs through the 16500 column, x = 5.5).
      const size_t k = static_cast<size_t>(std::lower_bound(p.lengths.begin(), p.lengths.end(), train_length) - p.lengths.begin());
      double col = static_cast<double>(k);
      if (p.lengths[k] != train_length)
        col = (k - 1) + static_cast<double>(train_length - p.lengths[k - 1]) / static_cast<double>(p.lengths[k] - p.lengths[k - 1]);
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\" stroke-width=\"3\" "
          "stroke-dasharray=\"8,5\"/>\n",
          gx + cell_w * (col + 0.5), top, top + gh);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"middle\">Document Length</text>\n",
                       gx + gw / 2, top + gh + bottom - 12, style.axis_size);
    svg += fmt::format(
        "<text x=\"{0:.1f}\" y=\"{1:.1f}\" font-size=\"{2}\" text-anchor=\"middle\" transform=\"rotate(-90 {0:.1f} {1:.1f})\">Depth Percent</text>\n",
        x0 + 22, top + gh / 2, style.axis_size);
    x0 += left + gw + gap;
  }
  // Colour bar: 1 (bottom) to 10 (top).
  const double bx = x0 - gap + 10, bh = height - top - bottom;  // after the last panel, no gap
  for (int k = 0; k < 30; ++k) {
    const double v = 10.0 - 9.0 * (k + 0.5) / 30.0;
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.2f}\" width=\"14\" height=\"{:.2f}\" fill=\"{}\"/>\n", bx,
                       top + bh * k / 30.0, bh / 30.0 + 0.2, score_colour(v));
  }
  for (int v : {1, 5, 10})
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\">{}</text>\n", bx + 18,
                       top + bh * (10.0 - v) / 9.0 + 4, style.label_size, v);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\">Score</text>\n", bx - 4, top - 8, style.label_size);
  svg += "</svg>\n";
  return svg;
}

void plot_niah_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, bool judge, int64_t train_length) {
  if (!labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label: {} labels for {} files (one per file, or none)", labels.size(), files.size()));
  std::vector<HeatmapPanel> panels;
  for (size_t i = 0; i < files.size(); ++i) panels.push_back(read_heatmap_panel(files[i], labels.empty() ? "" : labels[i], judge));
  write_text_atomic(out, heatmap_svg(panels, train_length));
}

}  // namespace foxeval::niah
