#include "tasks/ruler/ruler_table.h"

#include <algorithm>
#include <string>

#include "data/json_file.h"
#include "tasks/results/report.h"
#include "tasks/ruler/ruler_plot.h"
#include "tasks/ruler/ruler_samples.h"

using nlohmann::json;

namespace foxeval::ruler {
namespace {

using results::Column;
using results::Table;

const char* const kCategories[] = {"NIAH", "multi-hop tracing", "aggregation", "QA"};

Column column(const std::string& key, const std::string& label, bool summary = false) {
  return {key, label, label, "score↑", "score$\\uparrow$", false, 1, summary};
}

std::string length_label(const std::string& L) {
  const long long n = std::stoll(L);
  return n % 1024 == 0 ? std::to_string(n / 1024) + "K" : L;
}

void add(results::TableFiller& f, const results::ResultFile& r) {
  const json& scores = r.json.at("scores");
  Table& mean = f.table("ruler", "RULER: score (%) by context length, mean over the tasks run");
  const size_t row = f.row(mean, r.label);
  for (const auto& [L, v] : r.json.at("ruler").items())
    f.set(mean, row, f.column(mean, column("len_" + L, length_label(L))), 100 * v.get<double>(), r, "ruler/" + L, 100);
  for (const auto& [L, cats] : r.json.at("categories").items()) {
    Table& t = f.table("ruler-" + L, "RULER at " + L + " tokens: score (%) by category");
    const size_t tr = f.row(t, r.label);
    f.set(t, tr, f.column(t, column("ruler", "RULER", true)), 100 * r.json.at("ruler").at(L).get<double>(), r, "ruler/" + L, 100);
    for (const char* c : kCategories)
      if (cats.contains(c)) f.set(t, tr, f.column(t, column(c, c)), 100 * cats.at(c).get<double>(), r, std::string("categories/") + L + "/" + c, 100);
  }
  for (const json& task : r.json.at("tasks")) {
    const std::string name = task.get<std::string>();
    for (const auto& [L, v] : scores.at(name).items()) {
      Table& t = f.table("ruler-" + L + "-tasks", "RULER at " + L + " tokens: score (%) by task");
      f.set(t, f.row(t, r.label), f.column(t, column(name, name)), 100 * v.get<double>(), r, "scores/" + name + "/" + L, 100);
    }
  }
}

bool recognises(const json& r) { return r.contains("kind") && r["kind"] == "foxeval-ruler"; }

// Columns by length, categories in RULER's order, tasks in the group's; the mean table first,
// then each length's category and task tables by length.
void finish(std::vector<Table>& tables) {
  const json defs = read_json(ruler_tasks_path());
  std::vector<std::string> order = {"ruler"};
  order.insert(order.end(), std::begin(kCategories), std::end(kCategories));
  for (const json& t : defs.at("group")) order.push_back(t.get<std::string>());
  auto rank = [&](const Column& c) -> long long {
    if (c.key.rfind("len_", 0) == 0) return std::stoll(c.key.substr(4));
    return std::find(order.begin(), order.end(), c.key) - order.begin();
  };
  for (Table& t : tables) results::sort_columns(t, [&](const Column& a, const Column& b) { return rank(a) < rank(b); });
  auto table_rank = [](const Table& t) -> std::pair<long long, int> {
    if (t.id == "ruler") return {-1, 0};
    const std::string rest = t.id.substr(6);  // "ruler-"
    return {std::stoll(rest), rest.find("-tasks") == std::string::npos ? 0 : 1};
  };
  std::stable_sort(tables.begin(), tables.end(), [&](const Table& a, const Table& b) { return table_rank(a) < table_rank(b); });
}

std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::vector<ScoreSeries> series;
  for (const results::ResultFile* r : in.results) series.push_back(read_score_series(r->json, r->label, "", r->path));
  if (series.empty()) return {};
  return {{"ruler", "RULER by context length",
           report::figure_html("figure-ruler", score_plot_svg(series, ""),
                               "Score (%) against context length, the mean over the RULER tasks each result ran."),
           46}};
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"ruler", 46, add, recognises, finish, nullptr, nullptr, report};
}

}  // namespace foxeval::ruler
