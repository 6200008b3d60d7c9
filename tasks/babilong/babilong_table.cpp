#include "tasks/babilong/babilong_table.h"

#include <algorithm>
#include <string>

#include "tasks/babilong/babilong_def.h"
#include "tasks/babilong/babilong_plot.h"
#include "tasks/results/report.h"

using nlohmann::json;

namespace foxeval::babilong {
namespace {

using results::Column;
using results::Table;

Column length_column(const std::string& length) { return {"len_" + length, length, length, "acc↑", "acc$\\uparrow$", false, 1}; }

void add(results::TableFiller& f, const results::ResultFile& r) {
  const json& lengths = r.json.at("lengths");
  Table& mean = f.table("babilong", "BABILong: accuracy (%) by context length, mean over the tasks run");
  const size_t row = f.row(mean, r.label);
  for (const json& l : lengths)
    f.set(mean, row, f.column(mean, length_column(l.get<std::string>())), 100 * r.json.at("mean_by_length").at(l.get<std::string>()).get<double>(), r,
          "mean_by_length/" + l.get<std::string>(), 100);
  for (auto t = r.json.at("acc").begin(); t != r.json.at("acc").end(); ++t) {
    Table& table = f.table("babilong-" + t.key(), "BABILong " + t.key() + ": accuracy (%) by context length");
    const size_t tr = f.row(table, r.label);
    for (auto l = t->begin(); l != t->end(); ++l) f.set(table, tr, f.column(table, length_column(l.key())), 100 * l->get<double>(), r,
                                                    "acc/" + t.key() + "/" + l.key(), 100);
  }
}

bool recognises(const json& r) { return r.contains("kind") && r["kind"] == "foxeval-babilong"; }

// Columns in the dataset's length order; the mean table first, then qa1..qa20.
void finish(std::vector<Table>& tables) {
  const std::vector<std::string>& order = definitions().lengths;
  auto rank = [&](const Column& c) { return std::find(order.begin(), order.end(), c.label) - order.begin(); };
  for (Table& t : tables) results::sort_columns(t, [&](const Column& a, const Column& b) { return rank(a) < rank(b); });
  auto table_rank = [](const Table& t) { return t.id == "babilong" ? 0 : std::stoi(t.id.substr(std::string("babilong-qa").size())); };
  std::stable_sort(tables.begin(), tables.end(), [&](const Table& a, const Table& b) { return table_rank(a) < table_rank(b); });
}

// Mean accuracy against context length, one line per result.
std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::vector<ScoreSeries> series;
  for (const results::ResultFile* r : in.results) series.push_back(read_score_series(r->json, r->label, "", r->path));
  if (series.empty()) return {};
  return {{"babilong", "BABILong by context length",
           report::figure_html("figure-babilong", score_plot_svg(series, ""),
                               "Accuracy (%) against context length, mean over the tasks each result ran."),
           45}};
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"babilong", 45, add, recognises, finish, nullptr, nullptr, report};
}

}  // namespace foxeval::babilong
