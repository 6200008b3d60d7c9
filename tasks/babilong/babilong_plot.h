// BABILong's figure: accuracy (%) against context length, one line per result (the mean over the
// tasks run, or one task), lengths evenly spaced in the dataset's order. `foxeval plot babilong`
// and the report's BABILong section draw it.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace foxeval::babilong {

struct ScoreSeries {
  std::string label;
  nlohmann::json by_length;  // {"0k": accuracy in [0, 1], ...}
};

// The series of a result: its mean_by_length, or acc[task] when `task` is given. Errors name the file.
ScoreSeries read_score_series(const nlohmann::json& result, const std::string& label, const std::string& task,
                              const std::string& file);

// The SVG. foxeval::Error for no series.
std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title);

// `foxeval plot babilong`: labels[i] (when given) names files[i] (else the model folder's name); written atomically.
void plot_babilong_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                         const std::string& task, const std::string& out);

}  // namespace foxeval::babilong
