#include "tasks/babilong/babilong_plot.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/babilong/babilong_def.h"
#include "tasks/results/plot.h"

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
  return {series_label(label, result.value("identity", nlohmann::json::object()).value("model", ""), file), *by};
}

std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title) {
  if (series.empty()) throw Error("plot babilong: no results");
  // The lengths any series has, in the dataset's order.
  std::vector<std::string> lengths;
  for (const std::string& l : definitions().lengths)
    for (const ScoreSeries& s : series)
      if (s.by_length.contains(l) && std::find(lengths.begin(), lengths.end(), l) == lengths.end()) lengths.push_back(l);
  if (lengths.empty()) throw Error("plot babilong: the results hold no length");
  // Lengths evenly spaced, in the dataset's order; a series without a length has a gap there.
  const bool one = lengths.size() == 1;
  auto x_of = [&](size_t i) { return one ? 1.0 : static_cast<double>(i); };
  PercentChart chart{title, "Context length", "Accuracy (%)", one ? 2.0 : static_cast<double>(lengths.size() - 1), {}};
  for (size_t i = 0; i < lengths.size(); ++i) chart.x_ticks.emplace_back(x_of(i), lengths[i]);
  std::vector<PercentSeries> lines;
  for (const ScoreSeries& s : series) {
    PercentSeries& line = lines.emplace_back(PercentSeries{s.label, {}});
    for (size_t i = 0; i < lengths.size(); ++i)
      if (s.by_length.contains(lengths[i])) line.points.push_back({x_of(i), s.by_length.at(lengths[i]).get<double>()});
  }
  return percent_chart_svg(chart, lines);
}

void plot_babilong_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                         const std::string& task, const std::string& out) {
  plot_result_files(files, labels, task, out, &read_score_series, &score_plot_svg,
                    task.empty() ? "BABILong: mean accuracy by context length" : "BABILong " + task + ": accuracy by context length");
}

}  // namespace foxeval::babilong
