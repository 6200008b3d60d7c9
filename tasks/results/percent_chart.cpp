// The score chart of tasks/results/plot.h (percent_chart_svg) and the labels of a figure's results: what
// RULER's and BABILong's figures share (tasks/ruler/ruler_plot.cpp, tasks/babilong/babilong_plot.cpp).
#include <fmt/format.h>

#include <filesystem>

#include "data/errors.h"
#include "tasks/results/plot.h"

namespace foxeval {

std::string percent_chart_svg(const PercentChart& chart, const std::vector<PercentSeries>& series) {
  const double W = 720, H = 420, left = 70, right = 150, top = chart.title.empty() ? 24 : 52, bottom = 60;
  const double aw = W - left - right, ah = H - top - bottom;
  auto sx = [&](double x) { return left + aw * x / chart.x_span; };
  auto sy = [&](double pct) { return top + ah * (1 - pct / 100); };
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                                R"(font-family="DejaVu Sans, Helvetica, Arial, sans-serif">)" "\n"
                                R"(<rect x="0" y="0" width="{0}" height="{1}" fill="#ffffff"/>)" "\n", W, H);
  if (!chart.title.empty())
    svg += fmt::format(R"(<text x="{:.1f}" y="32" font-size="18" font-weight="bold" text-anchor="middle" fill="#222">{}</text>)" "\n",
                       left + aw / 2, xml_escape(chart.title));
  for (int pct = 0; pct <= 100; pct += 20)
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#e3e3e3"/>)"
                       R"(<text x="{3:.1f}" y="{4:.1f}" font-size="12" text-anchor="end" fill="#444">{5}</text>)" "\n",
                       left, sy(pct), left + aw, left - 8, sy(pct) + 4, pct);
  for (const auto& [x, text] : chart.x_ticks)
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#444">{}</text>)" "\n", sx(x),
                       top + ah + 18, xml_escape(text));
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222">{}</text>)" "\n",
                     left + aw / 2, H - 16, xml_escape(chart.x_title));
  svg += fmt::format(R"SVG(<text x="18" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222" transform="rotate(-90 18 {:.1f})">)SVG"
                     "{}</text>\n", top + ah / 2, top + ah / 2, xml_escape(chart.y_title));
  for (size_t k = 0; k < series.size(); ++k) {
    const std::string colour = plot_colour(k);
    std::string pts, marks;
    for (const PercentPoint& p : series[k].points) {
      const double x = sx(p.x), y = sy(100 * p.value);
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", x, y);
      marks += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)", x, y, colour);
    }
    svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)" "\n{}\n", pts, colour, marks);
    const double ly = top + 10 + 20 * static_cast<double>(k);
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="{3}" stroke-width="2"/>)"
                       R"(<text x="{4:.1f}" y="{5:.1f}" font-size="12" fill="#222">{6}</text>)" "\n",
                       left + aw + 12, ly, left + aw + 32, colour, left + aw + 38, ly + 4, xml_escape(series[k].label));
  }
  return svg + "</svg>\n";
}

std::string series_label(const std::string& label, const std::string& model, const std::string& file) {
  if (!label.empty()) return label;
  return model.empty() ? std::filesystem::path(file).stem().string() : std::filesystem::path(model).filename().string();
}

void check_plot_labels(const std::vector<std::string>& labels, const std::vector<std::string>& files) {
  if (!labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label given {} times for {} files: give one per file, or none", labels.size(), files.size()));
}

}  // namespace foxeval
