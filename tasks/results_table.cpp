#include "tasks/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/longbench/python_numbers.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace foxeval::results {
namespace {

const char* const kDash = "\xE2\x80\x93";  // "–": a missing cell, never 0

std::string definitions_path() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("FOXEVAL_TASKS_DIR")) tried.push_back(std::string(env) + "/results_table.json");
#ifdef FOXEVAL_DATA_DIR
  tried.push_back((fs::path(FOXEVAL_DATA_DIR).parent_path() / "tasks/results_table.json").string());
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back((exe.parent_path().parent_path() / "tasks/results_table.json").string());
  for (const std::string& p : tried)
    if (fs::is_regular_file(p)) return p;
  std::string list;
  for (const std::string& p : tried) list += (list.empty() ? "" : ", ") + p;
  throw Error(fmt::format("table definitions (tasks/results_table.json) not found; tried: {} (set FOXEVAL_TASKS_DIR "
                          "to the source tree's tasks/ folder)",
                          list));
}

const json* settings_of(const json& r) {
  if (r.contains("header") && r["header"].is_object() && r["header"].contains("settings") &&
      r["header"]["settings"].is_object())
    return &r["header"]["settings"];
  if (r.contains("identity") && r["identity"].is_object()) return &r["identity"];
  return nullptr;
}

std::string string_field(const json* obj, const char* key) {
  if (obj && obj->contains(key) && (*obj)[key].is_string()) return (*obj)[key].get<std::string>();
  return "";
}

// The model directory a result names: header settings (or the loss identity), else a top-level
// "model" (niah and lm-eval results copy it there).
std::string model_path(const json& r) {
  std::string m = string_field(settings_of(r), "model");
  if (m.empty()) m = string_field(&r, "model");
  return m;
}

// The checkpoint's name: the repo of a Hugging Face cache snapshot
// (.../models--org--name/snapshots/hash), else the folder's name.
std::string model_name(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  if (p.parent_path().filename() == "snapshots") {
    const std::string cache = p.parent_path().parent_path().filename().string();
    const size_t sep = cache.rfind("--");
    if (cache.rfind("models--", 0) == 0 && sep != std::string::npos && sep > 6) return cache.substr(sep + 2);
  }
  return p.filename().string();
}

bool is_number(const json& v) { return v.is_number(); }

// eval.py's result.json: {task: score} or, for LongBench-E, {task: {"0-4k": s, "4-8k": s, "8k+": s}}.
bool looks_like_longbench_scores(const json& r) {
  if (!r.is_object() || r.empty()) return false;
  const json& tasks = table_definitions()["longbench"]["labels"];
  bool known = false;
  for (auto it = r.begin(); it != r.end(); ++it) {
    if (!is_number(it.value()) && !(it.value().is_object() && it.value().contains("0-4k"))) return false;
    known = known || tasks.contains(it.key());
  }
  return known;
}

std::string detect_kind(const json& r, const std::string& path) {
  if (!r.is_object()) throw Error(fmt::format("{}: not a result (a JSON object expected)", path));
  const std::string kind = r.value("kind", "");
  if (kind == "foxeval-part" || kind == "foxeval-loss-part")
    throw Error(fmt::format("{}: a shard part; combine the parts with `foxeval merge` first", path));
  if (r.contains("header") && r["header"].is_object() && r["header"].contains("task")) {
    const std::string task = r["header"]["task"].is_string() ? r["header"]["task"].get<std::string>() : "";
    if (task == "loss" || task == "niah" || task == "longbench" || task == "lm-eval") return task;
    throw Error(fmt::format("{}: header.task '{}' has no table (known: loss, niah, longbench, lm-eval)", path,
                            r["header"]["task"].dump()));
  }
  if (kind == "foxeval-loss") return "loss";
  if (r.contains("cells") && r.contains("mean")) return "niah";
  if (r.contains("results") && r["results"].is_object()) return "lm-eval";
  if (r.contains("scores") && r["scores"].is_object()) return "longbench";
  if (looks_like_longbench_scores(r)) return "longbench";
  throw Error(fmt::format("{}: not a result foxeval can tabulate (no header.task; not a loss, niah, longbench or "
                          "lm-eval result)",
                          path));
}

std::string latex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += '\\'; out += c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

// The plain-text form of the official LaTeX metric labels ("acc$\uparrow$" -> "acc↑").
std::string plain_metric(std::string s) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"$\\uparrow$", "\xE2\x86\x91"}, {"$\\downarrow$", "\xE2\x86\x93"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }
  return s;
}

// Fills a table's cells from results, remembering which file gave each (a second one is an error).
class TableFiller {
 public:
  explicit TableFiller(Table* t) : t_(t) {}
  size_t row(const std::string& label) {
    auto it = std::find(t_->rows.begin(), t_->rows.end(), label);
    if (it != t_->rows.end()) return static_cast<size_t>(it - t_->rows.begin());
    t_->rows.push_back(label);
    t_->values.emplace_back(t_->columns.size());
    return t_->rows.size() - 1;
  }
  size_t column(const Column& c) {
    for (size_t i = 0; i < t_->columns.size(); ++i)
      if (t_->columns[i].key == c.key) return i;
    t_->columns.push_back(c);
    for (auto& v : t_->values) v.resize(t_->columns.size());
    return t_->columns.size() - 1;
  }
  void set(size_t r, size_t c, double v, const std::string& file) {
    auto [it, fresh] = from_.emplace(std::make_pair(r, c), file);
    if (!fresh)
      throw Error(fmt::format("{} and {} both give {} '{}' of row '{}'; name different models with --label", it->second,
                              file, t_->title, t_->columns[c].key, t_->rows[r]));
    t_->values[r][c] = v;
  }

 private:
  Table* t_;
  std::map<std::pair<size_t, size_t>, std::string> from_;
};

// The tasks a LongBench table always shows and averages: the paper's 14, or its 11 LongBench-E tasks.
std::vector<std::string> longbench_avg_tasks(const Table& t) {
  return table_definitions()["longbench"][t.id == "longbench" ? "tasks" : "e_tasks"].get<std::vector<std::string>>();
}

Column longbench_column(const std::string& task) {
  const json& labels = table_definitions()["longbench"]["labels"];
  const std::string label = labels.contains(task) ? labels[task].get<std::string>() : task;
  return {task, label, latex_escape(label), "", "", false, -1};
}

Table make_longbench_table(const std::string& bucket) {
  Table t;
  t.id = bucket.empty() ? "longbench" : "longbench-e " + bucket;
  t.title = bucket.empty() ? "LongBench (higher is better; Avg: the 14 English tasks)"
                           : fmt::format("LongBench-E, {} tokens (higher is better; Avg: the paper's 11 LongBench-E tasks)", bucket);
  for (const std::string& task : longbench_avg_tasks(t)) t.columns.push_back(longbench_column(task));
  t.columns.push_back({"avg", "Avg", "Avg", "", "", false, 2});
  return t;
}

// LongBench: eval.py's scores (foxeval's "scores", or a result.json itself); with --e, per bucket.
// Every task present gets a column (the Chinese and synthetic ones too): none is dropped.
void add_longbench(std::map<std::string, Table>& tables, std::map<std::string, TableFiller>& fillers,
                   const ResultFile& r) {
  const json& scores = r.json.contains("scores") ? r.json["scores"] : r.json;
  std::vector<std::string> buckets;
  for (auto it = scores.begin(); it != scores.end(); ++it)
    if (it.value().is_object())
      for (auto b = it.value().begin(); b != it.value().end(); ++b)
        if (std::find(buckets.begin(), buckets.end(), b.key()) == buckets.end()) buckets.push_back(b.key());
  if (buckets.empty()) buckets.push_back("");
  for (const std::string& bucket : buckets) {
    Table proto = make_longbench_table(bucket);
    auto [it, fresh] = tables.emplace(proto.id, proto);
    TableFiller& f = fillers.emplace(proto.id, TableFiller(&it->second)).first->second;
    const size_t row = f.row(r.label);
    for (auto task = scores.begin(); task != scores.end(); ++task) {
      const json& v = bucket.empty() ? task.value() : (task.value().is_object() ? task.value().value(bucket, json()) : json());
      if (v.is_number()) f.set(row, f.column(longbench_column(task.key())), v.get<double>(), r.path);
    }
  }
}

// LongBench's column order (all_tasks), tasks it does not know after them by name, Avg last.
void order_longbench_columns(Table& t) {
  const std::vector<std::string> order = table_definitions()["longbench"]["all_tasks"].get<std::vector<std::string>>();
  auto rank = [&](const Column& c) -> std::pair<size_t, std::string> {
    if (c.key == "avg") return {order.size() + 1, ""};
    const auto at = std::find(order.begin(), order.end(), c.key);
    return {at == order.end() ? order.size() : static_cast<size_t>(at - order.begin()), c.key};
  };
  std::vector<size_t> idx(t.columns.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return rank(t.columns[a]) < rank(t.columns[b]); });
  Table s = t;
  for (size_t i = 0; i < idx.size(); ++i) {
    s.columns[i] = t.columns[idx[i]];
    for (size_t r = 0; r < t.rows.size(); ++r) s.values[r][i] = t.values[r][idx[i]];
  }
  t = std::move(s);
}

Table make_lm_eval_table() {
  const json& d = table_definitions()["lm_eval"];
  Table t;
  t.id = "lm-eval";
  t.title = "lm-evaluation-harness, zero-shot (acc x100; Avg: the mean accuracy)";
  const std::set<std::string> lower = d["lower_is_better"].get<std::set<std::string>>();
  for (const json& task : d["tasks"]) {
    const std::string k = task.get<std::string>();
    const std::string label = d["task_labels"].at(k).get<std::string>();
    const std::string metric = d["metric_labels"].at(d["task_to_metric"].at(k).get<std::string>()).get<std::string>();
    t.columns.push_back({k, label, label, plain_metric(metric), metric, lower.count(k) > 0, 2});
  }
  t.columns.push_back({"avg", "Avg", "Avg", plain_metric("$\\uparrow$"), "$\\uparrow$", false, 2});
  return t;
}

// lm-eval: each column's metric of results[task]; accuracies x100 as the official table prints them.
void add_lm_eval(Table& t, TableFiller& f, const ResultFile& r) {
  const json& d = table_definitions()["lm_eval"];
  const json& results = r.json.at("results");
  const size_t row = f.row(r.label);
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
    if (metric.find("acc") != std::string::npos) x *= 100;
    f.set(row, c, x, r.path);
  }
}

// Loss: val/loss_avg_len_L for every L of the result, as columns in increasing L.
void add_loss(Table& t, TableFiller& f, const ResultFile& r) {
  const std::string prefix = "val/loss_avg_len_";
  const size_t row = f.row(r.label);
  for (auto it = r.json.begin(); it != r.json.end(); ++it) {
    if (it.key().rfind(prefix, 0) != 0 || !it.value().is_number()) continue;
    const std::string len = it.key().substr(prefix.size());
    if (len.empty() || len.find_first_not_of("0123456789") != std::string::npos) continue;  // not a length
    const size_t c = f.column({"loss_len_" + len, len, len, "", "", true, 3});
    f.set(row, c, it.value().get<double>(), r.path);
  }
}

// NIAH: the mean score of the result's mode (and the judge's mean, where there is one).
void add_niah(Table& t, TableFiller& f, const ResultFile& r) {
  std::string mode = string_field(&r.json, "mode");
  if (mode.empty()) mode = string_field(settings_of(r.json), "mode");
  if (mode.empty()) throw Error(fmt::format("{}: a NIAH result without its mode", r.path));
  const size_t row = f.row(r.label);
  if (!r.json["mean"].is_number()) throw Error(fmt::format("{}: 'mean' is not a number", r.path));
  f.set(row, f.column({mode, mode, latex_escape(mode), "", "", false, 2}), r.json["mean"].get<double>(), r.path);
  if (r.json.contains("judge") && r.json["judge"].is_object() && r.json["judge"].contains("mean")) {
    const std::string key = mode + " (judge)";
    f.set(row, f.column({key, key, latex_escape(key), "", "", false, 2}), r.json["judge"]["mean"].get<double>(), r.path);
  }
}

// The average column: defined only when every averaged task is present.
void fill_average(Table& t, const std::vector<std::string>& tasks) {
  const size_t avg = t.columns.size() - 1;
  for (auto& row : t.values) {
    std::vector<double> xs;
    for (size_t c = 0; c < avg; ++c)
      if (std::find(tasks.begin(), tasks.end(), t.columns[c].key) != tasks.end()) {
        if (!row[c]) break;
        xs.push_back(*row[c]);
      }
    // Official: np.mean over the tasks in column order.
    if (xs.size() == tasks.size()) row[avg] = longbench::numpy_mean(xs);
  }
}

// Known modes in the paper's order, others after them as first seen.
void order_niah_columns(Table& t) {
  auto rank = [](const std::string& k) {
    const std::string mode = k.substr(0, k.find(' '));
    const int m = mode == "standard" ? 0 : mode == "easy" ? 1 : 2;
    return 2 * m + (k.find("(judge)") != std::string::npos ? 1 : 0);
  };
  std::vector<size_t> order(t.columns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(t.columns[a].key) < rank(t.columns[b].key); });
  Table s = t;
  for (size_t i = 0; i < order.size(); ++i) {
    s.columns[i] = t.columns[order[i]];
    for (size_t r = 0; r < t.rows.size(); ++r) s.values[r][i] = t.values[r][order[i]];
  }
  t = std::move(s);
}

void order_loss_columns(Table& t) {
  std::vector<size_t> order(t.columns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return std::stoll(t.columns[a].label) < std::stoll(t.columns[b].label); });
  Table s = t;
  for (size_t i = 0; i < order.size(); ++i) {
    s.columns[i] = t.columns[order[i]];
    for (size_t r = 0; r < t.rows.size(); ++r) s.values[r][i] = t.values[r][order[i]];
  }
  t = std::move(s);
}

std::string marked(const Table& t, size_t r, size_t c, const char* bold_open, const char* bold_close,
                   const char* under_open, const char* under_close, const char* missing) {
  const std::optional<double>& v = t.values[r][c];
  if (!v) return missing;
  const std::string s = format_value(t.columns[c], *v);
  if (t.rank[r][c] == 1) return bold_open + s + bold_close;
  if (t.rank[r][c] == 2) return under_open + s + under_close;
  return s;
}

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '*' || c == '_' || c == '<' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string latex_rows(const Table& t) {
  std::string out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::string line = latex_escape(t.rows[r]);
    for (size_t c = 0; c < t.columns.size(); ++c)
      line += " & " + marked(t, r, c, "\\textbf{", "}", "\\underline{", "}", "--");
    out += line + " \\\\\n";
  }
  return out;
}

// table_longbench.py's layout: grouped header, rotated task names (Avg added after Code).
std::string latex_longbench(const Table& t) {
  const json& groups = table_definitions()["longbench"]["groups"];
  std::string caption = "Evaluation results on LongBench";
  std::string label = "tab:long-bench";
  if (t.id != "longbench") {
    const std::string bucket = t.id.substr(std::string("longbench-e ").size());
    caption = fmt::format("Evaluation results on LongBench-E, {} tokens", latex_escape(bucket));
    label = "tab:long-bench-e-" + bucket;
    label.erase(std::remove(label.begin(), label.end(), '+'), label.end());
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
  out += latex_rows(t);
  out += "\\bottomrule\n\\end{tabular}\n}\n\\end{center}\n\\end{table}\n";
  return out;
}

// table_lm_eval.py's layout: task row, metric row, 'l|cc|c...c|c'.
std::string latex_lm_eval(const Table& t) {
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
  out += latex_rows(t);
  out += "\\bottomrule\n\\end{tabular}\n}\n\\end{center}\n\\end{table}\n";
  return out;
}

// The official scripts' generic booktabs table (loss, NIAH).
std::string latex_generic(const Table& t) {
  std::string out = "\\begin{table}[ht]\n\\centering\n\\begin{tabular}{l" + std::string(t.columns.size(), 'r') +
                    "}\n\\toprule\nModel";
  for (const Column& c : t.columns) out += " & " + c.latex_label;
  out += " \\\\\n\\midrule\n" + latex_rows(t) + "\\bottomrule\n\\end{tabular}\n";
  out += "\\caption{" + latex_escape(t.title) + ". Bold and underlined numbers indicate the best and the second-best results, respectively.}\n";
  out += "\\label{tab:" + t.id + "}\n\\end{table}\n";
  return out;
}

}  // namespace

const json& table_definitions() {
  static const json defs = [] {
    const std::string path = definitions_path();
    json d = read_json(path);
    for (const char* k : {"model_labels", "longbench", "lm_eval"})
      if (!d.contains(k)) throw Error(fmt::format("{}: no '{}'", path, k));
    return d;
  }();
  return defs;
}

std::string model_label(const json& r, const std::string& path) {
  const json& known = table_definitions()["model_labels"];
  auto official = [&](const std::string& name) { return known.contains(name) ? known[name].get<std::string>() : name; };
  const std::string model = model_path(r);
  if (!model.empty() && !model_name(model).empty()) return official(model_name(model));
  if (r.contains("model_info") && r["model_info"].is_object()) {
    const std::string family = string_field(&r["model_info"], "family");
    if (!family.empty()) return family;
  }
  const std::string model_type = string_field(settings_of(r), "model_type");
  if (!model_type.empty()) return model_type;
  // The official layouts keep one folder per model: pred/<model>/result.json, <model>/results.json.
  const fs::path p = fs::absolute(path);
  const std::string stem = p.stem().string();
  if ((stem == "result" || stem == "results" || stem == "run") && !p.parent_path().filename().empty())
    return official(p.parent_path().filename().string());
  return stem;
}

ResultFile read_result(const std::string& path, const std::string& label) {
  ResultFile r;
  r.path = path;
  r.json = read_json(path);
  r.kind = detect_kind(r.json, path);
  r.model = model_path(r.json);
  r.label_given = !label.empty();
  r.label = label.empty() ? model_label(r.json, path) : label;
  return r;
}

std::vector<ResultFile> read_results(const std::vector<std::string>& files, const std::vector<std::string>& labels) {
  if (files.empty()) throw Error("no result files given");
  if (!labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label: {} labels for {} files (one per file, in order, or none)", labels.size(), files.size()));
  std::vector<ResultFile> out;
  for (size_t i = 0; i < files.size(); ++i) out.push_back(read_result(files[i], labels.empty() ? "" : labels[i]));
  return out;
}

std::vector<Table> build_tables(const std::vector<ResultFile>& results) {
  // One label must mean one model (unless the user named the rows).
  std::map<std::string, const ResultFile*> owner;
  for (const ResultFile& r : results) {
    if (r.label_given || r.model.empty()) continue;
    auto [it, fresh] = owner.emplace(r.label, &r);
    if (!fresh && it->second->model != r.model)
      throw Error(fmt::format("{} ({}) and {} ({}) are different models with the same label '{}'; name them with --label",
                              it->second->path, it->second->model, r.path, r.model, r.label));
  }
  std::map<std::string, Table> tables;
  std::map<std::string, TableFiller> fillers;
  auto table = [&](const std::string& id, const std::function<Table()>& make) -> std::pair<Table*, TableFiller*> {
    auto it = tables.find(id);
    if (it == tables.end()) {
      it = tables.emplace(id, make()).first;
      fillers.emplace(id, TableFiller(&it->second));
    }
    return {&it->second, &fillers.at(id)};
  };
  for (const ResultFile& r : results) {
    if (r.kind == "longbench") {
      add_longbench(tables, fillers, r);
    } else if (r.kind == "lm-eval") {
      auto [t, f] = table("lm-eval", make_lm_eval_table);
      add_lm_eval(*t, *f, r);
    } else if (r.kind == "loss") {
      auto [t, f] = table("loss", [] {
        Table t;
        t.id = "loss";
        t.title = "Held-out loss: mean over the first L tokens (lower is better)";
        return t;
      });
      add_loss(*t, *f, r);
    } else if (r.kind == "niah") {
      auto [t, f] = table("niah", [] {
        Table t;
        t.id = "niah";
        t.title = "Needle in a haystack: mean score per mode (1-10, higher is better)";
        return t;
      });
      add_niah(*t, *f, r);
    }
  }
  std::vector<Table> out;
  const std::vector<std::string> lm_avg = table_definitions()["lm_eval"]["avg"].get<std::vector<std::string>>();
  for (auto& [id, t] : tables)
    if (id.rfind("longbench", 0) == 0) {
      order_longbench_columns(t);
      fill_average(t, longbench_avg_tasks(t));
    }
  if (tables.count("lm-eval")) fill_average(tables["lm-eval"], lm_avg);
  if (tables.count("loss")) order_loss_columns(tables["loss"]);
  if (tables.count("niah")) order_niah_columns(tables["niah"]);
  // LongBench first, then its buckets in eval.py's order, lm-eval, loss, NIAH.
  for (const char* id : {"longbench", "longbench-e 0-4k", "longbench-e 4-8k", "longbench-e 8k+", "lm-eval", "loss", "niah"}) {
    auto it = tables.find(id);
    if (it == tables.end()) continue;
    out.push_back(std::move(it->second));
    tables.erase(it);
  }
  for (auto& [id, t] : tables) out.push_back(std::move(t));  // other LongBench-E buckets
  for (Table& t : out) rank_columns(t);
  return out;
}

void rank_columns(Table& t) {
  t.rank.assign(t.rows.size(), std::vector<int>(t.columns.size(), 0));
  for (size_t c = 0; c < t.columns.size(); ++c) {
    std::set<double> distinct;
    for (size_t r = 0; r < t.rows.size(); ++r)
      if (t.values[r][c]) distinct.insert(*t.values[r][c]);
    if (distinct.empty()) continue;
    std::vector<double> sorted(distinct.begin(), distinct.end());  // increasing
    if (!t.columns[c].lower_is_better) std::reverse(sorted.begin(), sorted.end());
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (!t.values[r][c]) continue;
      if (*t.values[r][c] == sorted[0]) t.rank[r][c] = 1;
      else if (sorted.size() > 1 && *t.values[r][c] == sorted[1]) t.rank[r][c] = 2;
    }
  }
}

std::string format_value(const Column& column, double value) {
  if (column.decimals < 0) return json(value).dump();  // shortest round trip, as Python's repr
  return fmt::format("{:.{}f}", value, column.decimals);
}

Format parse_format(const std::string& name) {
  if (name == "markdown") return Format::Markdown;
  if (name == "latex") return Format::Latex;
  if (name == "csv") return Format::Csv;
  throw Error(fmt::format("--format '{}': expected markdown, latex or csv", name));
}

std::string render_markdown(const Table& t) {
  std::string out = "### " + t.title + "\n\n| Model |";
  for (const Column& c : t.columns) out += " " + markdown_escape(c.metric.empty() ? c.label : c.label + " " + c.metric) + " |";
  out += "\n| :-- |";
  for (size_t c = 0; c < t.columns.size(); ++c) out += " --: |";
  out += "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += "| " + markdown_escape(t.rows[r]) + " |";
    for (size_t c = 0; c < t.columns.size(); ++c) out += " " + marked(t, r, c, "**", "**", "<u>", "</u>", kDash) + " |";
    out += "\n";
  }
  return out;
}

std::string render_latex(const Table& t) {
  if (t.id == "lm-eval") return latex_lm_eval(t);
  if (t.id.rfind("longbench", 0) == 0) return latex_longbench(t);
  return latex_generic(t);
}

std::string render_csv(const Table& t) {
  std::string out = "model";
  for (const Column& c : t.columns) out += "," + csv_field(c.key);
  out += "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += csv_field(t.rows[r]);
    for (size_t c = 0; c < t.columns.size(); ++c)
      out += "," + (t.values[r][c] ? json(*t.values[r][c]).dump() : std::string());
    out += "\n";
  }
  return out;
}

std::string render_tables(const std::vector<Table>& tables, Format format) {
  std::string out;
  for (const Table& t : tables) {
    if (!out.empty()) out += "\n";
    out += format == Format::Markdown ? render_markdown(t) : format == Format::Latex ? render_latex(t) : render_csv(t);
  }
  return out;
}

std::string table_from_files(const std::vector<std::string>& files, const std::vector<std::string>& labels, Format format) {
  return render_tables(build_tables(read_results(files, labels)), format);
}

}  // namespace foxeval::results
