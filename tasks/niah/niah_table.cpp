#include "tasks/niah/niah_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/errors.h"
#include "tasks/niah/heatmap.h"
#include "tasks/results/plot.h"
#include "tasks/results/report.h"

using nlohmann::json;

namespace foxeval::niah {
namespace {

using results::Column;
using results::Table;

const json& defs() { return results::task_data("niah/niah_table.json"); }

std::string string_field(const json* obj, const char* key) {
  if (obj && obj->contains(key) && (*obj)[key].is_string()) return (*obj)[key].get<std::string>();
  return "";
}

// The mean score of the result's mode (and the judge's mean, where there is one).
void add(results::TableFiller& f, const results::ResultFile& r) {
  Table& t = f.table("niah", "Needle in a haystack: mean score per mode (1-10, higher is better)");
  std::string mode = string_field(&r.json, "mode");
  if (mode.empty()) mode = string_field(results::settings_of(r.json), "mode");
  if (mode.empty()) throw Error(fmt::format("{}: a NIAH result without its mode", r.path));
  const size_t row = f.row(t, r.label);
  if (!r.json["mean"].is_number()) throw Error(fmt::format("{}: 'mean' is not a number", r.path));
  f.set(t, row, f.column(t, {mode, mode, results::latex_escape(mode), "", "", false, 2}), r.json["mean"].get<double>(), r,
        "mean");
  if (r.json.contains("judge") && r.json["judge"].is_object() && r.json["judge"].contains("mean")) {
    const std::string key = mode + " (judge)";
    f.set(t, row, f.column(t, {key, key, results::latex_escape(key), "", "", false, 2}), r.json["judge"]["mean"].get<double>(),
          r, "judge/mean");
  }
}

bool recognises(const json& r) { return r.contains("cells") && r.contains("mean"); }

// Known modes in the paper's order, others after them as first seen; each mode's judge after it.
void finish(std::vector<Table>& tables) {
  const std::vector<std::string> modes = defs()["modes"].get<std::vector<std::string>>();
  auto rank = [&](const Column& c) {
    const std::string mode = c.key.substr(0, c.key.find(' '));
    const size_t m = static_cast<size_t>(std::find(modes.begin(), modes.end(), mode) - modes.begin());
    return 2 * m + (c.key.find("(judge)") != std::string::npos ? 1 : 0);
  };
  for (Table& t : tables) results::sort_columns(t, [&](const Column& a, const Column& b) { return rank(a) < rank(b); });
}

// The paper's grid and numerics. A result that does not record its grid (`niah score` of a
// prediction folder) is judged by the lengths and depths its cells cover.
std::vector<results::Setting> settings(const results::ResultFile& r) {
  const json* recorded = results::settings_of(r.json);
  results::ResultFile grid;
  json s = recorded ? *recorded : json::object();
  for (const auto& [name, by] : {std::pair<const char*, const char*>{"lengths", "mean_by_length"}, {"depths", "mean_by_depth"}}) {
    if (s.contains(name) || !r.json.contains(by) || !r.json[by].is_array()) continue;
    const std::string key = std::string(name).substr(0, std::string(name).size() - 1);  // "length", "depth"
    json values = json::array();
    for (const json& e : r.json[by])
      if (e.is_object() && e.contains(key)) values.push_back(e[key]);
    s[name] = values;
  }
  grid.json = {{"identity", s}};
  return results::paper_settings(grid, defs()["paper_settings"]);
}

// A heatmap per result, in the page's font, at its grid's size.
std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::string figures;
  int n = 0;
  HeatmapStyle style;
  style.font_family = "";  // the page's
  style.label_size = 13;
  style.axis_size = 14;
  style.title_size = 15;
  for (const results::ResultFile* r : in.results) {
    const HeatmapPanel panel = read_heatmap_panel(r->path, r->label, /*judge=*/false);
    figures += report::figure_html(fmt::format("figure-niah-{}", n++),
                                   heatmap_svg({panel}, in.options->train_length, style),
                                   xml_escape(panel.title) + ": score (1-10) of each context length and needle depth.",
                                   "natural");
  }
  if (figures.empty()) return {};
  return {{"niah", "Needle in a haystack", "<div class=\"grid\">\n" + figures + "</div>\n", 20}};
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"niah", 40, add, recognises, finish, settings, nullptr, report};
}

}  // namespace foxeval::niah
