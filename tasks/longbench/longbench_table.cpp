#include "tasks/longbench/longbench_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "data/errors.h"
#include "tasks/results/plot.h"
#include "tasks/results/report.h"

using nlohmann::json;

namespace foxeval::longbench {
namespace {

using results::Column;
using results::Table;

const json& defs() { return results::task_data("longbench/longbench_table.json"); }

const char* const kBucketPrefix = "longbench-e ";

// The tasks a LongBench table always shows and averages: the paper's 14, or its 11 LongBench-E tasks.
std::vector<std::string> avg_tasks(bool e) { return defs()[e ? "e_tasks" : "tasks"].get<std::vector<std::string>>(); }

Column task_column(const std::string& task) {
  const json& labels = defs()["labels"];
  const std::string label = labels.contains(task) ? labels[task].get<std::string>() : task;
  return {task, label, results::latex_escape(label), "", "", false, -1};
}

Table make_table(const std::string& bucket) {
  Table t;
  t.id = bucket.empty() ? "longbench" : kBucketPrefix + bucket;
  t.title = bucket.empty() ? "LongBench (higher is better; Avg: the 14 English tasks)"
                           : fmt::format("LongBench-E, {} tokens (higher is better; Avg: the paper's 11 LongBench-E tasks)", bucket);
  for (const std::string& task : avg_tasks(!bucket.empty())) t.columns.push_back(task_column(task));
  t.columns.push_back({"avg", "Avg", "Avg", "", "", false, 2, true});
  return t;
}

// eval.py's scores (foxeval's "scores", or a result.json itself); with --e, per bucket. Every
// task present gets a column (the Chinese and synthetic ones too): none is dropped.
void add(results::TableFiller& f, const results::ResultFile& r) {
  const json& scores = r.json.contains("scores") ? r.json["scores"] : r.json;
  std::vector<std::string> buckets;
  for (auto it = scores.begin(); it != scores.end(); ++it)
    if (it.value().is_object())
      for (auto b = it.value().begin(); b != it.value().end(); ++b)
        if (std::find(buckets.begin(), buckets.end(), b.key()) == buckets.end()) buckets.push_back(b.key());
  if (buckets.empty()) buckets.push_back("");
  for (const std::string& bucket : buckets) {
    Table& t = f.table(bucket.empty() ? "longbench" : kBucketPrefix + bucket, [&] { return make_table(bucket); });
    const size_t row = f.row(t, r.label);
    for (auto task = scores.begin(); task != scores.end(); ++task) {
      const json& v = bucket.empty() ? task.value() : (task.value().is_object() ? task.value().value(bucket, json()) : json());
      // eval.py writes NaN for a LongBench-E bucket without records: missing, not a number to rank
      // or chart (a bucket no task has records in makes an empty table, left out).
      if (v.is_number() && std::isfinite(v.get<double>()))
        f.set(t, row, f.column(t, task_column(task.key())), v.get<double>(), r,
              "scores/" + task.key() + (bucket.empty() ? "" : "/" + bucket));
    }
  }
}

// eval.py's result.json: {task: score} or, for LongBench-E, {task: {"0-4k": s, "4-8k": s, "8k+": s}};
// foxeval's result without a header: a "scores" object.
bool recognises(const json& r) {
  if (r.contains("scores") && r["scores"].is_object()) return true;
  if (!r.is_object() || r.empty()) return false;
  const json& tasks = defs()["labels"];
  bool known = false;
  for (auto it = r.begin(); it != r.end(); ++it) {
    if (!it.value().is_number() && !(it.value().is_object() && it.value().contains("0-4k"))) return false;
    known = known || tasks.contains(it.key());
  }
  return known;
}

// LongBench's column order (all_tasks), tasks it does not know after them by name, Avg last;
// the Avg; the tables: LongBench, then its buckets in eval.py's order, then any other bucket.
void finish(std::vector<Table>& tables) {
  const std::vector<std::string> order = defs()["all_tasks"].get<std::vector<std::string>>();
  auto rank = [&](const Column& c) -> std::pair<size_t, std::string> {
    if (c.key == "avg") return {order.size() + 1, ""};
    const auto at = std::find(order.begin(), order.end(), c.key);
    return {at == order.end() ? order.size() : static_cast<size_t>(at - order.begin()), c.key};
  };
  for (Table& t : tables) {
    results::sort_columns(t, [&](const Column& a, const Column& b) { return rank(a) < rank(b); });
    results::fill_average(t, t.columns.size() - 1, avg_tasks(t.id != "longbench"));
  }
  const std::vector<std::string> known = {"longbench", "longbench-e 0-4k", "longbench-e 4-8k", "longbench-e 8k+"};
  auto place = [&](const Table& t) {
    return static_cast<size_t>(std::find(known.begin(), known.end(), t.id) - known.begin());
  };
  std::stable_sort(tables.begin(), tables.end(), [&](const Table& a, const Table& b) { return place(a) < place(b); });
}

// The paper's settings, and its task set: a result over fewer of the paper's tasks is marked
// (its tasks' scores are still comparable, so it is ranked with the others).
std::vector<results::Setting> settings(const results::ResultFile& r) {
  std::vector<results::Setting> out = results::paper_settings(r, defs()["paper_settings"]);
  const json* s = results::settings_of(r.json);
  const bool e = s && s->contains("e") && (*s)["e"].is_boolean() && (*s)["e"].get<bool>();
  const std::vector<std::string> paper = avg_tasks(e);
  out.push_back(results::task_subset(r, paper, fmt::format("the {} {}", paper.size(), e ? "LongBench-E tasks" : "English tasks")));
  return out;
}

// table_longbench.py's layout: grouped header, rotated task names (Avg added after Code).
std::string latex(const Table& t) {
  const json& groups = defs()["groups"];
  std::string caption = "Evaluation results on LongBench";
  std::string label = "tab:long-bench";
  if (t.id != "longbench") {
    const std::string bucket = t.id.substr(std::string(kBucketPrefix).size());
    caption = fmt::format("Evaluation results on LongBench-E, {} tokens", results::latex_escape(bucket));
    label = "tab:long-bench-e-";
    for (char c : bucket)  // a bucket is a result file's key: only [A-Za-z0-9-] goes into \label
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') label += c;
  }
  std::string out = "\\begin{table}\n";
  out += "\\caption{" + caption + ". Bold and underlined numbers indicate the best and the second-best results, respectively.}\n";
  out += "\\label{" + label + "}\n\\begin{center}\n\\resizebox{\\columnwidth}{!}{\n";
  out += "\\begin{tabular}{l" + std::string(t.columns.size(), 'r') + "}\n\\toprule\n";
  // The header row's groups: runs of consecutive columns of one category (tasks without one: "Other").
  auto group_of = [&](const std::string& task) -> std::string {
    for (auto g = groups.begin(); g != groups.end(); ++g)
      if (std::find(g.value().begin(), g.value().end(), json(task)) != g.value().end()) return g.key();
    return "Other";
  };
  std::string group_row = "\\multirow{5}{*}{Model}", rules;
  size_t first = 2;
  for (size_t c = 0; c + 1 < t.columns.size();) {
    const std::string group = group_of(t.columns[c].key);
    size_t n = 0;
    while (c + n + 1 < t.columns.size() && group_of(t.columns[c + n].key) == group) ++n;
    group_row += fmt::format(" & \\multicolumn{{{}}}{{c}}{{{}}}", n, group);
    rules += fmt::format("\\cmidrule(lr){{{}-{}}}", first, first + n - 1);
    first += n;
    c += n;
  }
  out += group_row + " & \\multirow{5}{*}{Avg} \\\\\n" + rules + "\n";
  std::string label_row;
  for (size_t c = 0; c + 1 < t.columns.size(); ++c)
    label_row += " & \\rotatebox[origin=c]{45}{" + t.columns[c].latex_label + "}";
  out += label_row + " &  \\\\\n\\midrule\n";
  out += results::latex_rows(t);
  out += "\\bottomrule\n\\end{tabular}\n}\n" + results::latex_notes(t) + "\\end{center}\n\\end{table}\n";
  return out;
}

// Per task as grouped bars, one chart per table.
std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::string html;
  for (const Table* t : in.tables) {
    BarChartOptions o;
    o.y_label = "Score (0-100)";
    html += report::figure_html("figure-" + report::slug(t->id), bar_chart_svg(*t, o),
                                xml_escape(t->title) + ": score per task and model.");
  }
  if (html.empty()) return {};
  return {{"longbench", "LongBench per task", html, 30}};
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"longbench", 10, add, recognises, finish, settings, latex, report};
}

}  // namespace foxeval::longbench
