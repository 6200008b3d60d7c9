#include "tasks/lm_eval/lm_eval_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

using nlohmann::json;

namespace foxeval::lm_eval {
namespace {

using results::Column;
using results::Table;

const json& defs() { return results::task_data("lm_eval/lm_eval_table.json"); }

Table make_table() {
  const json& d = defs();
  Table t;
  t.id = "lm-eval";
  t.title = "lm-evaluation-harness, zero-shot (acc x100; Avg: the mean accuracy)";
  const std::set<std::string> lower = d["lower_is_better"].get<std::set<std::string>>();
  for (const json& task : d["tasks"]) {
    const std::string k = task.get<std::string>();
    const std::string label = d["task_labels"].at(k).get<std::string>();
    const std::string metric = d["metric_labels"].at(d["task_to_metric"].at(k).get<std::string>()).get<std::string>();
    t.columns.push_back({k, label, label, results::plain_metric(metric), metric, lower.count(k) > 0, 2});
  }
  t.columns.push_back({"avg", "Avg", "Avg", results::plain_metric("$\\uparrow$"), "$\\uparrow$", false, 2, true});
  return t;
}

// Each column's metric of results[task]; accuracies x100 as the official table prints them.
void add(results::TableFiller& f, const results::ResultFile& r) {
  const json& d = defs();
  Table& t = f.table("lm-eval", make_table);
  const json& results = r.json.at("results");
  const size_t row = f.row(t, r.label);
  for (size_t c = 0; c + 1 < t.columns.size(); ++c) {
    std::string task = t.columns[c].key;
    const std::string metric = d["task_to_metric"].at(task).get<std::string>();
    const std::string suffix = "_perp";
    if (task.size() > suffix.size() && task.compare(task.size() - suffix.size(), suffix.size(), suffix) == 0)
      task = task.substr(0, task.size() - suffix.size());
    if (!results.contains(task) || !results[task].is_object() || !results[task].contains(metric)) continue;
    const json& v = results[task][metric];
    if (!v.is_number()) continue;  // "N/A"
    double x = v.get<double>();
    const double scale = metric.find("acc") != std::string::npos ? 100 : 1;
    f.set(t, row, c, x * scale, r, "results/" + task + "/" + metric, scale);
  }
}

// lm-eval's own results.json (and foxeval's without a header): a "results" object.
bool recognises(const json& r) { return r.contains("results") && r["results"].is_object(); }

void finish(std::vector<Table>& tables) {
  const std::vector<std::string> avg = defs()["avg"].get<std::vector<std::string>>();
  for (Table& t : tables) results::fill_average(t, t.columns.size() - 1, avg);
}

// The paper's settings, and its task set: a result over fewer of the paper's tasks is marked
// (its tasks' numbers are still comparable, so it is ranked with the others).
std::vector<results::Setting> settings(const results::ResultFile& r) {
  std::vector<results::Setting> out = results::paper_settings(r, defs()["paper_settings"]);
  std::vector<std::string> paper;  // the columns' tasks, each once (lambada gives two columns)
  for (const json& k : defs()["tasks"]) {
    std::string task = k.get<std::string>();
    if (task.size() > 5 && task.compare(task.size() - 5, 5, "_perp") == 0) task.resize(task.size() - 5);
    if (std::find(paper.begin(), paper.end(), task) == paper.end()) paper.push_back(task);
  }
  out.push_back(results::task_subset(r, paper, fmt::format("the {} tasks", paper.size())));
  return out;
}

// table_lm_eval.py's layout: task row, metric row, 'l|cc|c...c|c'.
std::string latex(const Table& t) {
  std::string out =
      "\\begin{table}\n\\caption{Evaluation results on LM-eval-harness.}\n\\label{table:lm-eval}\n\\begin{center}\n"
      "\\resizebox{\\columnwidth}{!}{\n";
  out += "\\begin{tabular}{l|cc|" + std::string(t.columns.size() - 3, 'c') + "|c}\n\\toprule\n";
  std::string tasks = "\\textbf{Model}", metrics;
  for (const Column& c : t.columns) {
    tasks += " & \\textbf{" + c.latex_label + "}";
    metrics += " & " + c.latex_metric;
  }
  out += tasks + " \\\\\n" + metrics + " \\\\\n\\midrule\n";
  out += results::latex_rows(t);
  out += "\\bottomrule\n\\end{tabular}\n}\n" + results::latex_notes(t) + "\\end{center}\n\\end{table}\n";
  return out;
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"lm-eval", 20, add, recognises, finish, settings, latex, nullptr};
}

}  // namespace foxeval::lm_eval
