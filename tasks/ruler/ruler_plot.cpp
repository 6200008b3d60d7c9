#include "tasks/ruler/ruler_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/plot.h"

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
  s.label = series_label(label, result.value("identity", nlohmann::json::object()).value("model", ""), file);
  return s;
}

std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title) {
  if (series.empty()) throw Error("plot ruler: no results");
  std::set<int64_t> length_set;
  for (const ScoreSeries& s : series)
    for (const auto& p : s.points) length_set.insert(p.first);
  if (length_set.empty()) throw Error("plot ruler: the results hold no length");
  const std::vector<int64_t> lengths(length_set.begin(), length_set.end());
  // Lengths on a log2 axis (RULER's are powers of two; others fall between them).
  const double lo = std::log2(static_cast<double>(lengths.front())), hi = std::log2(static_cast<double>(lengths.back()));
  auto x_of = [&](int64_t L) { return hi == lo ? 1.0 : std::log2(static_cast<double>(L)) - lo; };
  PercentChart chart{title, "Context length (tokens)", "Score (%)", hi == lo ? 2.0 : hi - lo, {}};
  for (int64_t L : lengths)
    chart.x_ticks.emplace_back(x_of(L), L % 1024 == 0 ? fmt::format("{}K", L / 1024) : std::to_string(L));
  std::vector<PercentSeries> lines;
  for (const ScoreSeries& s : series) {
    PercentSeries& line = lines.emplace_back(PercentSeries{s.label, {}});
    for (const auto& [L, v] : s.points) line.points.push_back({x_of(L), v});
  }
  return percent_chart_svg(chart, lines);
}

void plot_ruler_files(const std::vector<std::string>& files, const std::vector<std::string>& labels, const std::string& what,
                      const std::string& out) {
  plot_result_files(files, labels, what, out, &read_score_series, &score_plot_svg,
                    what.empty() ? "RULER: mean score over the tasks by context length" : "RULER " + what + ": score by context length");
}

}  // namespace foxeval::ruler
