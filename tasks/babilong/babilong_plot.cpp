#include "tasks/babilong/babilong_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/babilong/babilong_def.h"
#include "tasks/plot.h"

namespace foxeval::babilong {

ScoreSeries read_score_series(const nlohmann::json& result, const std::string& label, const std::string& task,
                              const std::string& file) {
  if (!result.is_object() || result.value("kind", "") != "foxeval-babilong")
    throw Error(fmt::format("{}: not a babilong result (kind foxeval-babilong)", file));
  const nlohmann::json* by = nullptr;
  if (task.empty()) {
    by = &result.at("mean_by_length");
  } else {
    if (!result.at("acc").contains(task)) throw Error(fmt::format("{}: no task {} (it holds {})", file, task, result.at("tasks").dump()));
    by = &result.at("acc").at(task);
  }
  std::string name = label;
  if (name.empty()) {
    const std::string model = result.value("identity", nlohmann::json::object()).value("model", "");
    name = model.empty() ? std::filesystem::path(file).stem().string() : std::filesystem::path(model).filename().string();
  }
  return {name, *by};
}

std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title) {
  if (series.empty()) throw Error("plot babilong: no results");
  // The lengths any series has, in the dataset's order.
  std::vector<std::string> lengths;
  for (const std::string& l : definitions().lengths)
    for (const ScoreSeries& s : series)
      if (s.by_length.contains(l) && std::find(lengths.begin(), lengths.end(), l) == lengths.end()) lengths.push_back(l);
  if (lengths.empty()) throw Error("plot babilong: the results hold no length");
  const double W = 720, H = 420, left = 70, right = 150, top = title.empty() ? 24 : 52, bottom = 60;
  const double aw = W - left - right, ah = H - top - bottom;
  auto sx = [&](size_t i) { return left + (lengths.size() == 1 ? aw / 2 : aw * static_cast<double>(i) / static_cast<double>(lengths.size() - 1)); };
  auto sy = [&](double pct) { return top + ah * (1 - pct / 100); };
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                                R"(font-family="DejaVu Sans, Helvetica, Arial, sans-serif">)" "\n"
                                R"(<rect x="0" y="0" width="{0}" height="{1}" fill="#ffffff"/>)" "\n", W, H);
  if (!title.empty())
    svg += fmt::format(R"(<text x="{:.1f}" y="32" font-size="18" font-weight="bold" text-anchor="middle" fill="#222">{}</text>)" "\n",
                       left + aw / 2, xml_escape(title));
  for (int pct = 0; pct <= 100; pct += 20)
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#e3e3e3"/>)"
                       R"(<text x="{3:.1f}" y="{4:.1f}" font-size="12" text-anchor="end" fill="#444">{5}</text>)" "\n",
                       left, sy(pct), left + aw, left - 8, sy(pct) + 4, pct);
  for (size_t i = 0; i < lengths.size(); ++i)
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#444">{}</text>)" "\n", sx(i),
                       top + ah + 18, xml_escape(lengths[i]));
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222">Context length</text>)" "\n",
                     left + aw / 2, H - 16);
  svg += fmt::format(R"SVG(<text x="18" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222" transform="rotate(-90 18 {:.1f})">)SVG"
                     "Accuracy (%)</text>\n", top + ah / 2, top + ah / 2);
  for (size_t k = 0; k < series.size(); ++k) {
    const std::string colour = plot_colour(k);
    std::string pts, marks;
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (!series[k].by_length.contains(lengths[i])) continue;  // a gap: the line skips the length
      const double x = sx(i), y = sy(100 * series[k].by_length.at(lengths[i]).get<double>());
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

void plot_babilong_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                         const std::string& task, const std::string& out) {
  if (!labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label given {} times for {} files: give one per file, or none", labels.size(), files.size()));
  std::vector<ScoreSeries> series;
  for (size_t i = 0; i < files.size(); ++i)
    series.push_back(read_score_series(read_json(files[i]), labels.empty() ? "" : labels[i], task, files[i]));
  write_text_atomic(out, score_plot_svg(series, task.empty() ? "BABILong: mean accuracy by context length"
                                                            : "BABILong " + task + ": accuracy by context length"));
}

}  // namespace foxeval::babilong
