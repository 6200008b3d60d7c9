// RULER's figure: score (%) against context length, one line per result (the `ruler` mean over the
// tasks run, a category, or one task), the lengths on a log2 axis. `foxeval plot ruler` and the
// report's RULER section draw it.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace foxeval::ruler {

struct ScoreSeries {
  std::string label;
  std::vector<std::pair<int64_t, double>> points;  // (length, score in [0, 1]), lengths ascending
};

// The series of a result (`ruler run` or `ruler score`): its "ruler" means, or with `what` a
// category ("NIAH", "multi-hop tracing", "aggregation", "QA") or a task. Errors name the file.
ScoreSeries read_score_series(const nlohmann::json& result, const std::string& label, const std::string& what,
                              const std::string& file);

// The SVG. foxeval::Error for no series.
std::string score_plot_svg(const std::vector<ScoreSeries>& series, const std::string& title);

// `foxeval plot ruler`: labels[i] (when given) names files[i] (else the model folder's name); written atomically.
void plot_ruler_files(const std::vector<std::string>& files, const std::vector<std::string>& labels, const std::string& what,
                      const std::string& out);

}  // namespace foxeval::ruler
