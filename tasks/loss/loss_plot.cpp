#include "tasks/loss/loss_plot.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

std::string loss_plot_svg(const std::vector<PlotSeries>& series, PlotOptions opts) {
  if (opts.y_title.empty()) opts.y_title = "Loss";
  return line_plot_svg(series, opts);
}

PlotSeries read_loss_series(const std::string& file, const std::string& label) {
  const nlohmann::json r = read_json(file);  // errors name the file
  if (!r.is_object() || !r.contains("val/loss_per_token"))
    throw Error(fmt::format("{}: no \"val/loss_per_token\" (not a `foxeval loss` result?)", file));
  const nlohmann::json& arr = r["val/loss_per_token"];
  if (!arr.is_array()) throw Error(fmt::format("{}: \"val/loss_per_token\" is not an array", file));
  if (arr.empty()) throw Error(fmt::format("{}: \"val/loss_per_token\" is empty", file));
  PlotSeries s;
  s.values.reserve(arr.size());
  bool any_finite = false;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const nlohmann::json& v = arr[i];
    if (v.is_null()) {  // NaN is written as null
      s.values.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      s.values.push_back(v.get<double>());
      any_finite = any_finite || std::isfinite(s.values.back());
    } else {
      throw Error(fmt::format("{}: \"val/loss_per_token\"[{}] is not a number", file, i));
    }
  }
  if (!any_finite) throw Error(fmt::format("{}: \"val/loss_per_token\" has no finite value", file));

  s.label = label;
  if (s.label.empty() && r.contains("identity") && r["identity"].is_object() && r["identity"].contains("model") &&
      r["identity"]["model"].is_string()) {
    std::string model = r["identity"]["model"].get<std::string>();
    while (model.size() > 1 && model.back() == '/') model.pop_back();
    const std::size_t slash = model.find_last_of('/');
    s.label = slash == std::string::npos ? model : model.substr(slash + 1);
  }
  if (s.label.empty()) {
    std::string name = file;
    const std::size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    s.label = name;
  }
  return s;
}

void plot_loss_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, const PlotOptions& opts) {
  if (files.empty()) throw Error("plot loss: no result files given");
  if (labels.size() > files.size())
    throw Error(fmt::format("plot loss: {} --label values for {} result files", labels.size(), files.size()));
  std::vector<PlotSeries> series;
  for (std::size_t i = 0; i < files.size(); ++i)
    series.push_back(read_loss_series(files[i], i < labels.size() ? labels[i] : ""));
  write_text_atomic(out, loss_plot_svg(series, opts));
}

}  // namespace foxeval
