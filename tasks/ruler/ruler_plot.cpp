#include "tasks/ruler/ruler_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/plot.h"

namespace foxeval::ruler {

ScoreSeries read_score_series(const nlohmann::json& result, const std::string& label, const std::string& what,
                              const std::string& file) {
  if (!result.is_object() || result.value("kind", "") != "foxeval-ruler")
    throw Error(fmt::format("{}: not a RULER result (kind foxeval-ruler, from `foxeval ruler run` or `ruler score`)", file));
  ScoreSeries s;
  if (what.empty()) {
    for (const auto& [L, v] : result.at("ruler").items()) s.points.emplace_back(std::stoll(L), v.get<double>());
  } else if (result.at("scores").contains(what)) {
    for (const auto& [L, v] : result.at("scores").at(what).items()) s.points.emplace_back(std::stoll(L), v.get<double>());
  } else {
    for (const auto& [L, cats] : result.at("categories").items())
      if (cats.contains(what)) s.points.emplace_back(std::stoll(L), cats.at(what).get<double>());
    if (s.points.empty())
      throw Error(fmt::format("{}: no task or category '{}' (tasks: {}; categories: NIAH, multi-hop tracing, aggregation, QA)", file,
                              what, result.at("tasks").dump()));
  }
  std::sort(s.points.begin(), s.points.end());
  s.label = label;
  if (s.label.empty()) {
    const std::string model = result.value("identity", nlohmann::json::object()).value("model", "");
    s.label = model.empty() ? std::filesystem::path(file).stem().string() : std::filesystem::path(model).filename().string();
  }
  return s;
}

std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title) {
  if (series.empty()) throw Error("plot ruler: no results");
  std::set<int64_t> length_set;
  for (const ScoreSeries& s : series)
    for (const auto& p : s.points) length_set.insert(p.first);
  if (length_set.empty()) throw Error("plot ruler: the results hold no length");
  const std::vector<int64_t> lengths(length_set.begin(), length_set.end());
  const double W = 720, H = 420, left = 70, right = 150, top = title.empty() ? 24 : 52, bottom = 60;
  const double aw = W - left - right, ah = H - top - bottom;
  // Lengths on a log2 axis (RULER's are powers of two; others fall between them).
  const double lo = std::log2(static_cast<double>(lengths.front())), hi = std::log2(static_cast<double>(lengths.back()));
  auto sx = [&](int64_t L) { return hi == lo ? left + aw / 2 : left + aw * (std::log2(static_cast<double>(L)) - lo) / (hi - lo); };
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
  for (int64_t L : lengths) {
    const std::string text = L % 1024 == 0 ? fmt::format("{}K", L / 1024) : std::to_string(L);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#444">{}</text>)" "\n", sx(L),
                       top + ah + 18, text);
  }
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222">Context length (tokens)</text>)" "\n",
                     left + aw / 2, H - 16);
  svg += fmt::format(R"SVG(<text x="18" y="{:.1f}" font-size="13" text-anchor="middle" fill="#222" transform="rotate(-90 18 {:.1f})">)SVG"
                     "Score (%)</text>\n", top + ah / 2, top + ah / 2);
  for (size_t k = 0; k < series.size(); ++k) {
    const std::string colour = plot_colour(k);
    std::string pts, marks;
    for (const auto& [L, v] : series[k].points) {
      const double x = sx(L), y = sy(100 * v);
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

void plot_ruler_files(const std::vector<std::string>& files, const std::vector<std::string>& labels, const std::string& what,
                      const std::string& out) {
  if (!labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label given {} times for {} files: give one per file, or none", labels.size(), files.size()));
  std::vector<ScoreSeries> series;
  for (size_t i = 0; i < files.size(); ++i)
    series.push_back(read_score_series(read_json(files[i]), labels.empty() ? "" : labels[i], what, files[i]));
  write_text_atomic(out, score_plot_svg(series, what.empty() ? "RULER: mean score over the tasks by context length"
                                                            : "RULER " + what + ": score by context length"));
}

}  // namespace foxeval::ruler
