#include "tasks/inspect/inspect_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "data/errors.h"
#include "tasks/inspect/inspect_plot.h"
#include "tasks/results/plot.h"
#include "tasks/results/report.h"

using nlohmann::json;

namespace foxeval::inspect {
namespace {

using results::Column;
using results::Table;

// Over all heads of the result: the mean forget gate, the mean log gate, the median of the heads'
// median reach at e^-5 (censored heads count as longest) and the mean prunable fraction at e^-10.
void add(results::TableFiller& f, const results::ResultFile& r) {
  const json& layers = r.json.at("layers");
  if (!layers.is_array() || layers.empty()) return;  // a model without decay: nothing to tabulate
  Table& t = f.table("inspect-gates", [] {
    Table t;
    t.id = "inspect-gates";
    t.title = "What the model forgets: its decays over all heads (foxeval inspect gates)";
    return t;
  });
  double sum_a = 0, sum_log = 0, prunable = 0;
  std::vector<double> reach;
  int64_t heads = 0;
  for (const json& l : layers)
    for (const json& h : l.at("heads")) {
      sum_a += h.at("gate").at("mean").get<double>();
      sum_log += h.at("mean_log_gate").get<double>();
      prunable += h.at("reach").at("10").at("prunable_fraction").get<double>();
      const json& m = h.at("reach").at("5").at("median");
      reach.push_back(m.is_null() ? 1e300 : m.get<double>());
      ++heads;
    }
  std::sort(reach.begin(), reach.end());
  const size_t row = f.row(t, r.label);
  f.set(t, row, f.column(t, {"mean_gate", "mean gate", "mean gate", "", "", false, 4}), sum_a / heads, r);
  f.set(t, row, f.column(t, {"mean_log_gate", "mean log gate", "mean log gate", "", "", false, 4}), sum_log / heads, r);
  const double med = reach[(reach.size() - 1) / 2];
  if (med < 1e300)
    f.set(t, row, f.column(t, {"reach5", "median head reach (e^-5)", "median head reach ($e^{-5}$)", "", "", false, 0}), med, r);
  f.set(t, row, f.column(t, {"prunable10", "prunable pairs (e^-10)", "prunable pairs ($e^{-10}$)", "", "", false, 4}),
        prunable / heads, r);
}

bool recognises(const json& r) { return r.value("kind", "") == "foxeval-inspect-gates"; }

std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::string figures;
  int n = 0;
  for (const results::ResultFile* r : in.results) {
    if (!r->json.contains("layers") || r->json["layers"].empty()) continue;
    figures += report::figure_html(fmt::format("figure-inspect-{}", n++), gates_heatmap_svg(r->json, 5, "head", r->label),
                                   xml_escape(r->label) + ": median decay reach per layer and head (distance at which "
                                                          "the decay falls below e^-5; all = the whole document).",
                                   "natural");
  }
  if (figures.empty()) return {};
  return {{"inspect", "What the model forgets", "<div class=\"grid\">\n" + figures + "</div>\n", 60}};
}

}  // namespace

results::ResultKind table_kind() {
  results::ResultKind k;
  k.task = "inspect-gates";
  k.order = 90;
  k.add = add;
  k.recognises = recognises;
  k.report = report;
  return k;
}

}  // namespace foxeval::inspect
