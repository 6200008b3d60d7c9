#include "tasks/results/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/resources.h"
#include "data/json_file.h"
#include "data/python/numbers.h"
#include "tasks/results/item_stats.h"
#include "tasks/results/metric_direction.h"
#include "tasks/result_kind.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace foxeval::results {
namespace {

const char* const kDash = "\xE2\x80\x93";  // "–": a missing cell, never 0
const char* const kMixed = "\x01mixed";     // the key of an average over cells of several settings

std::string string_field(const json* obj, const char* key) {
  if (obj && obj->contains(key) && (*obj)[key].is_string()) return (*obj)[key].get<std::string>();
  return "";
}

// The model directory a result names: header settings (or the identity), else a top-level
// "model" (some results copy it there).
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

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const ResultKind& detect_kind(const json& r, const std::string& path) {
  if (!r.is_object()) throw Error(fmt::format("{}: not a result (a JSON object expected)", path));
  const std::string kind = string_field(&r, "kind");
  if (kind.rfind("foxeval-", 0) == 0 && ends_with(kind, "-part"))
    throw Error(fmt::format("{}: a shard part; combine the parts with `foxeval merge` first", path));
  if (r.contains("header") && r["header"].is_object() && r["header"].contains("task")) {
    const std::string task = r["header"]["task"].is_string() ? r["header"]["task"].get<std::string>() : "";
    if (const ResultKind* k = find_kind(task)) return *k;
    throw Error(fmt::format("{}: header.task '{}' has no table (known: {})", path, r["header"]["task"].dump(),
                            registered_tasks()));
  }
  for (const ResultKind* k : kinds())
    if (k->recognises && k->recognises(r)) return *k;
  throw Error(fmt::format("{}: not a result foxeval can tabulate (no header.task, and not a result of {})", path,
                          registered_tasks()));
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

// The n a column's cells share (-1: none known, -2: they differ).
int64_t column_n(const Table& t, size_t c) {
  int64_t shared = -1;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (!t.values[r][c] || t.origin[r][c].n < 0) continue;
    if (shared == -1) shared = t.origin[r][c].n;
    else if (shared != t.origin[r][c].n) return -2;
  }
  return shared;
}

bool any_n(const Table& t) {
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (column_n(t, c) != -1) return true;
  return false;
}

// A cell's text: the value, "± stderr" on request, its n where the column's cells differ in n.
std::string marked(const Table& t, size_t r, size_t c, const char* bold_open, const char* bold_close,
                   const char* under_open, const char* under_close, const char* missing, const char* pm) {
  const std::optional<double>& v = t.values[r][c];
  if (!v) return missing;
  std::string s = format_value(t.columns[c], *v);
  if (t.rank[r][c] == 1) s = bold_open + s + bold_close;
  else if (t.rank[r][c] == 2) s = under_open + s + under_close;
  return s + cell_suffix(t, r, c, pm);
}

// A cell's data identity as the caveats print it: a digest shortened, else the text.
std::string short_data(const std::string& d) {
  const size_t colon = d.find(':');
  return colon != std::string::npos && d.size() > colon + 13 ? d.substr(0, colon + 13) + "\xE2\x80\xA6" : d;
}

// A footnote marker in a format ("" for none).
std::string mark(int note, const char* open, const char* close) {
  return note > 0 ? fmt::format("{}{}{}", open, note, close) : std::string();
}

std::string note_text(const std::string& deviations) { return "Not the paper's settings: " + deviations; }

}  // namespace

// --- the registry ---

namespace {
std::vector<ResultKind>& registry() {
  static std::vector<ResultKind> kinds;
  return kinds;
}
}  // namespace

void register_kind(ResultKind kind) {
  if (kind.task.empty() || !kind.add) throw Error("internal: a result kind needs a task name and an add function");
  for (ResultKind& k : registry())
    if (k.task == kind.task) {
      k = std::move(kind);
      return;
    }
  registry().push_back(std::move(kind));
}

std::vector<const ResultKind*> kinds() {
  std::vector<const ResultKind*> out;
  for (const ResultKind& k : registry()) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(), [](const ResultKind* a, const ResultKind* b) {
    return std::make_pair(a->order, a->task) < std::make_pair(b->order, b->task);
  });
  return out;
}

std::string registered_tasks() {
  std::string list;
  for (const ResultKind* k : kinds()) list += (list.empty() ? "" : ", ") + k->task;
  return list.empty() ? "none registered" : list;
}

const ResultKind* find_kind(const std::string& task) {
  for (const ResultKind& k : registry())
    if (k.task == task) return &k;
  return nullptr;
}

std::vector<Setting> paper_settings(const ResultFile& r, const json& spec) {
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  const json* recorded = settings_of(r.json);
  std::vector<Setting> out;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    const json& s = it.value();
    const json& paper = s.at("paper");
    Setting x;
    x.name = s.value("flag", it.key());
    x.paper = s.contains("shown") ? s["shown"].get<std::string>() : text(paper);
    x.comparable = s.value("comparable", true);
    // "also": values that count as the paper's (float32: the exact numerics bfloat16 autocast
    // approximates, what a CPU run uses; not a partial run).
    const json also = s.value("also", json::array());
    if (recorded && recorded->contains(it.key()) && (*recorded)[it.key()] != paper &&
        std::find(also.begin(), also.end(), (*recorded)[it.key()]) == also.end()) {
      x.value = text((*recorded)[it.key()]);
      x.differs = true;
    } else {
      x.value = x.paper;
    }
    out.push_back(std::move(x));
  }
  return out;
}

Setting task_subset(const ResultFile& r, const std::vector<std::string>& paper, const std::string& paper_text) {
  Setting x{"tasks", paper_text, paper_text, false, false};
  const json* s = settings_of(r.json);
  if (!s || !s->contains("tasks") || !(*s)["tasks"].is_array()) return x;
  const json& tasks = (*s)["tasks"];
  std::string have;
  size_t n = 0;
  for (const std::string& t : paper)
    if (std::find(tasks.begin(), tasks.end(), json(t)) != tasks.end()) {
      have += (have.empty() ? "" : ", ") + t;
      ++n;
    }
  if (n < paper.size()) {
    x.differs = true;
    x.value = fmt::format("{} of {}{}", n, paper.size(), have.empty() ? "" : " (" + have + ")");
  }
  return x;
}

// --- filling tables ---

Table& TableFiller::table(const std::string& id, const std::function<Table()>& make) {
  auto it = tables_.find(id);
  if (it == tables_.end()) it = tables_.emplace(id, make()).first;
  return it->second;
}

Table& TableFiller::table(const std::string& id, const std::string& title) {
  return table(id, [&] {
    Table t;
    t.id = id;
    t.title = title;
    return t;
  });
}

size_t TableFiller::row(Table& t, const std::string& label) {
  auto it = std::find(t.rows.begin(), t.rows.end(), label);
  if (it != t.rows.end()) return static_cast<size_t>(it - t.rows.begin());
  t.rows.push_back(label);
  t.values.emplace_back(t.columns.size());
  t.origin.emplace_back(t.columns.size());
  return t.rows.size() - 1;
}

size_t TableFiller::column(Table& t, const Column& c) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == c.key) return i;
  t.columns.push_back(c);
  for (auto& v : t.values) v.resize(t.columns.size());
  for (auto& o : t.origin) o.resize(t.columns.size());
  return t.columns.size() - 1;
}

namespace {

// The identity of the data a result's metric was computed on: lm-eval's per-task digest for
// "results/TASK/...", else the result's data digest (loss), haystack digest (NIAH), or data (a
// digest for LongBench, a description for older loss results).
std::string data_identity(const ResultFile& r, const std::string& metric) {
  const json* s = settings_of(r.json);
  if (!s) return "";
  if (metric.rfind("results/", 0) == 0 && s->contains("data") && (*s)["data"].is_object()) {
    const std::string task = metric.substr(8, metric.find('/', 8) - 8);
    const json& d = (*s)["data"];
    if (d.contains(task) && d[task].is_object() && d[task].contains("digest") && d[task]["digest"].is_string())
      return d[task]["digest"].get<std::string>();
    return "";
  }
  for (const char* k : {"data_digest", "haystack_digest", "data"})
    if (s->contains(k) && (*s)[k].is_string()) return (*s)[k].get<std::string>();
  return "";
}

}  // namespace

void TableFiller::set(Table& t, size_t r, size_t c, double v, const ResultFile& from, const std::string& metric,
                      double scale) {
  auto [it, fresh] = from_[t.id].emplace(std::make_pair(r, c), from.path);
  if (!fresh)
    throw Error(fmt::format("{} and {} both give {} '{}' of row '{}'; name different models with --label", it->second,
                            from.path, t.title, t.columns[c].key, t.rows[r]));
  t.values[r][c] = v;
  CellOrigin& o = t.origin[r][c];
  o.key = comparable_key(from, &o.paper);
  if (!metric.empty()) {
    if (const auto u = metric_uncertainty(from.json, metric)) {
      o.n = u->n;
      if (u->stderr_) o.stderr_ = *u->stderr_ * scale;
    }
    o.data = data_identity(from, metric);
    const Direction d = metric_direction(metric, from.kind);
    if (d != Direction::None) t.columns[c].lower_is_better = d == Direction::Lower;
  }
  const std::string note = deviation_note(from);
  if (!note.empty()) {
    auto at = std::find(t.notes.begin(), t.notes.end(), note);
    if (at == t.notes.end()) at = t.notes.insert(t.notes.end(), note);
    o.note = static_cast<int>(at - t.notes.begin()) + 1;
  }
}

std::vector<Table> TableFiller::take() {
  std::vector<Table> out;
  for (auto& [id, t] : tables_) out.push_back(std::move(t));
  tables_.clear();
  from_.clear();
  return out;
}

// --- settings ---

const json* settings_of(const json& r) {
  if (r.contains("header") && r["header"].is_object() && r["header"].contains("settings") &&
      r["header"]["settings"].is_object())
    return &r["header"]["settings"];
  if (r.contains("identity") && r["identity"].is_object()) return &r["identity"];
  return nullptr;
}

std::string comparable_key(const ResultFile& r, bool* paper) {
  std::string key;
  bool all_paper = true;
  for (const Setting& s : r.settings) {
    if (!s.comparable) continue;
    key += s.name + "=" + s.value + "\n";
    all_paper = all_paper && !s.differs;
  }
  if (paper) *paper = all_paper;
  return key;
}

std::string deviation_note(const ResultFile& r) {
  std::string out;
  for (const Setting& s : r.settings)
    if (s.differs) out += fmt::format("{}{} {} (paper: {})", out.empty() ? "" : "; ", s.name, s.value, s.paper);
  return out;
}

// --- definitions ---

const json& task_data(const std::string& relative) {
  static std::map<std::string, json> loaded;
  auto it = loaded.find(relative);
  if (it != loaded.end()) return it->second;
  const std::string path = find_resource({"table definitions (tasks/" + relative + ")", "tasks/" + relative, {},
                                          "FOXEVAL_TASKS_DIR", relative});
  return loaded.emplace(relative, read_json(path)).first->second;
}

const json& table_definitions() {
  const json& d = task_data("results/results_table.json");
  if (!d.contains("model_labels") || !d["model_labels"].is_object())
    throw Error("tasks/results/results_table.json: no 'model_labels' object");
  return d;
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
  const ResultKind& kind = detect_kind(r.json, path);
  r.kind = kind.task;
  r.model = model_path(r.json);
  r.label_given = !label.empty();
  r.label = label.empty() ? model_label(r.json, path) : label;
  if (kind.settings) r.settings = kind.settings(r);
  return r;
}

std::vector<ResultFile> read_results(const std::vector<std::string>& files, const std::vector<std::string>& labels) {
  if (files.empty()) throw Error("no result files given");
  // --label FILE=LABEL names some files' rows; otherwise one label per file, in order.
  std::map<std::string, std::string> by_file;
  size_t named = 0;
  for (const std::string& l : labels) {
    const size_t eq = l.find('=');
    if (eq == std::string::npos || std::find(files.begin(), files.end(), l.substr(0, eq)) == files.end()) continue;
    if (!by_file.emplace(l.substr(0, eq), l.substr(eq + 1)).second)
      throw Error(fmt::format("--label {}: that file is named twice", l));
    ++named;
  }
  if (named > 0 && named != labels.size())
    throw Error("--label: either FILE=LABEL for some files, or one LABEL per file in order, not both");
  if (named == 0 && !labels.empty() && labels.size() != files.size())
    throw Error(fmt::format("--label: {} labels for {} files (one per file, in order; FILE=LABEL for some files; or none)",
                            labels.size(), files.size()));
  std::vector<ResultFile> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto it = by_file.find(files[i]);
    out.push_back(read_result(files[i], named ? (it == by_file.end() ? "" : it->second) : labels.empty() ? "" : labels[i]));
  }
  return out;
}

// --- building ---

namespace {

// The cells (table id, column key) a result fills, from its kind's add on a scratch filler.
std::set<std::pair<std::string, std::string>> cells_of(const ResultKind& k, const ResultFile& r) {
  TableFiller scratch;
  ResultFile alone = r;
  alone.label = "row";
  k.add(scratch, alone);
  std::set<std::pair<std::string, std::string>> out;
  for (const Table& t : scratch.take())
    for (size_t c = 0; c < t.columns.size(); ++c)
      if (!t.rows.empty() && t.values[0][c]) out.emplace(t.id, t.columns[c].key);
  return out;
}

// Two results that would fill one row's cell twice, or one label for two different models (not
// named by --label), keep rows of their own: the later one takes " (2)", " (3)", ...
std::vector<ResultFile> distinct_rows(const std::vector<ResultFile>& results) {
  struct Placed {
    const ResultFile* r;
    std::set<std::pair<std::string, std::string>> cells;
  };
  std::map<std::string, std::vector<Placed>> by_label;
  std::vector<ResultFile> out;
  for (const ResultFile& r : results) {
    const ResultKind* k = find_kind(r.kind);
    if (!k) throw Error(fmt::format("{}: no table for results of '{}' (known: {})", r.path, r.kind, registered_tasks()));
    Placed me{&r, cells_of(*k, r)};
    auto clashes = [&](const std::string& label) {
      for (const Placed& p : by_label[label]) {
        if (!r.label_given && !p.r->label_given && !r.model.empty() && !p.r->model.empty() && r.model != p.r->model)
          return true;
        if (p.r->kind != r.kind) continue;
        for (const auto& cell : me.cells)
          if (p.cells.count(cell)) return true;
      }
      return false;
    };
    std::string label = r.label;
    for (int n = 2; clashes(label); ++n) label = fmt::format("{} ({})", r.label, n);
    out.push_back(r);
    out.back().label = label;
    by_label[label].push_back(std::move(me));
  }
  return out;
}

}  // namespace

std::vector<Table> build_tables(const std::vector<ResultFile>& given) {
  const std::vector<ResultFile> results = distinct_rows(given);
  std::map<std::string, TableFiller> fillers;
  for (const ResultFile& r : results) {
    const ResultKind* k = find_kind(r.kind);
    if (!k) throw Error(fmt::format("{}: no table for results of '{}' (known: {})", r.path, r.kind, registered_tasks()));
    k->add(fillers[r.kind], r);
  }
  std::vector<Table> out;
  for (const ResultKind* k : kinds()) {
    auto it = fillers.find(k->task);
    if (it == fillers.end()) continue;
    std::vector<Table> tables = it->second.take();
    for (Table& t : tables) t.kind = k->task;
    if (k->finish) k->finish(tables);
    for (Table& t : tables) out.push_back(std::move(t));
  }
  for (Table& t : out) rank_columns(t);
  return out;
}

void sort_columns(Table& t, const std::function<bool(const Column&, const Column&)>& less) {
  std::vector<size_t> order(t.columns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return less(t.columns[a], t.columns[b]); });
  Table s = t;
  for (size_t i = 0; i < order.size(); ++i) {
    s.columns[i] = t.columns[order[i]];
    for (size_t r = 0; r < t.rows.size(); ++r) {
      s.values[r][i] = t.values[r][order[i]];
      s.origin[r][i] = t.origin[r][order[i]];
    }
  }
  t = std::move(s);
}

void fill_average(Table& t, size_t avg, const std::vector<std::string>& keys) {
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<double> xs;
    std::vector<const CellOrigin*> from;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c == avg || std::find(keys.begin(), keys.end(), t.columns[c].key) == keys.end()) continue;
      if (!t.values[r][c]) break;
      xs.push_back(*t.values[r][c]);
      from.push_back(&t.origin[r][c]);
    }
    if (xs.size() != keys.size()) continue;
    // Official: np.mean over the columns in column order.
    t.values[r][avg] = numpy_mean(xs);
    CellOrigin o = *from.front();
    std::string data;  // the averaged cells' data, in column order: rows compare when all agree
    for (const CellOrigin* f : from) {
      if (f->key != o.key) o.key = kMixed, o.paper = false, o.note = 0;
      if (f->note != o.note) o.note = 0;
      data += f->data + ",";
    }
    o.n = -1;  // an average of columns, not of items
    o.stderr_.reset();
    o.data = data.find_first_not_of(',') == std::string::npos ? "" : data;
    t.origin[r][avg] = o;
  }
}

// Which cells of a column are ranked: those made with the paper's settings when there are any,
// else all when they share one setting, else none.
void rank_columns(Table& t) {
  t.rank.assign(t.rows.size(), std::vector<int>(t.columns.size(), 0));
  t.caveats.clear();
  if (t.origin.size() != t.rows.size()) t.origin.assign(t.rows.size(), std::vector<CellOrigin>(t.columns.size()));
  for (size_t c = 0; c < t.columns.size(); ++c) {
    bool any_paper = false;
    std::set<std::string> keys;
    for (size_t r = 0; r < t.rows.size(); ++r)
      if (t.values[r][c]) {
        any_paper = any_paper || t.origin[r][c].paper;
        keys.insert(t.origin[r][c].key);
      }
    auto ranked = [&](size_t r) {
      if (!t.values[r][c]) return false;
      return any_paper ? t.origin[r][c].paper : keys.size() == 1 && *keys.begin() != kMixed;
    };
    // Cells made on different data, or over different numbers of items, are not ranked against
    // each other: say which, with each row's data and n.
    std::set<std::string> data;
    std::set<int64_t> counts;
    for (size_t r = 0; r < t.rows.size(); ++r)
      if (ranked(r)) {
        if (!t.origin[r][c].data.empty()) data.insert(t.origin[r][c].data);
        if (t.origin[r][c].n >= 0) counts.insert(t.origin[r][c].n);
      }
    if (data.size() > 1 || counts.size() > 1) {
      std::string who;
      for (size_t r = 0; r < t.rows.size(); ++r) {
        if (!ranked(r)) continue;
        who += (who.empty() ? "" : "; ") + t.rows[r] + ":";
        if (data.size() > 1) who += " data " + short_data(t.origin[r][c].data.empty() ? "unknown" : t.origin[r][c].data);
        if (counts.size() > 1) who += t.origin[r][c].n >= 0 ? fmt::format(" n={}", t.origin[r][c].n) : " n unknown";
      }
      t.caveats.push_back(fmt::format("{} is not ranked: its cells were made on {} ({})", t.columns[c].label,
                                      data.size() > 1 ? "different data" : "different numbers of items", who));
      continue;
    }
    std::set<double> distinct;
    for (size_t r = 0; r < t.rows.size(); ++r)
      if (ranked(r)) distinct.insert(*t.values[r][c]);
    if (distinct.empty()) continue;
    std::vector<double> sorted(distinct.begin(), distinct.end());  // increasing
    if (!t.columns[c].lower_is_better) std::reverse(sorted.begin(), sorted.end());
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (!ranked(r)) continue;
      if (*t.values[r][c] == sorted[0]) t.rank[r][c] = 1;
      else if (sorted.size() > 1 && *t.values[r][c] == sorted[1]) t.rank[r][c] = 2;
    }
  }
}

int note_shown(const Table& t, size_t r, int column) {
  int shared = -1;  // the note every present cell has (-1: none seen yet, -2: they differ)
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (!t.values[r][c]) continue;
    const int n = t.origin[r][c].note;
    shared = shared == -1 || shared == n ? n : -2;
  }
  if (column < 0) return shared > 0 ? shared : 0;
  if (shared > 0 || !t.values[r][static_cast<size_t>(column)]) return 0;  // on the label, or no cell
  return t.origin[r][static_cast<size_t>(column)].note;
}

// --- formatting ---

std::string cell_suffix(const Table& t, size_t r, size_t c, const char* pm) {
  if (!t.values[r][c]) return "";
  const CellOrigin& o = t.origin[r][c];
  std::string s;
  if (t.show_stderr && o.stderr_) s += pm + format_value(t.columns[c], *o.stderr_);
  if (o.n >= 0 && column_n(t, c) == -2) s += fmt::format(" (n={})", o.n);
  return s;
}

std::string n_text(const Table& t, size_t c) {
  const int64_t n = column_n(t, c);
  return n >= 0 ? std::to_string(n) : n == -2 ? "varies" : "";
}

bool has_item_counts(const Table& t) { return any_n(t); }

bool has_values(const Table& t) {
  for (const auto& row : t.values)
    for (const auto& v : row)
      if (v) return true;
  return false;
}

std::string format_value(const Column& column, double value) {
  if (column.decimals < 0) return json(value).dump();  // shortest round trip, as Python's repr
  return fmt::format("{:.{}f}", value, column.decimals);
}

std::string readable_value(const Column& column, double value) {
  const double a = std::fabs(value);
  if (!std::isfinite(value) || a < 1e4) return format_value(column, value);
  if (a >= 1e15) return fmt::format("{:.3g}", value);
  std::string s = format_value(column, value);
  const size_t start = s[0] == '-' ? 1 : 0;
  size_t end = s.find_first_of(".eE", start);
  if (end == std::string::npos) end = s.size();
  for (size_t at = end; at > start + 3; at -= 3) s.insert(at - 3, ",");
  return s;
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

std::string plain_metric(std::string s) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"$\\uparrow$", "\xE2\x86\x91"}, {"$\\downarrow$", "\xE2\x86\x93"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  }
  return s;
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
    out += "| " + markdown_escape(t.rows[r]) + mark(note_shown(t, r, -1), "<sup>", "</sup>") + " |";
    for (size_t c = 0; c < t.columns.size(); ++c)
      out += " " + marked(t, r, c, "**", "**", "<u>", "</u>", kDash, " ± ") +
             mark(note_shown(t, r, static_cast<int>(c)), "<sup>", "</sup>") + " |";
    out += "\n";
  }
  if (any_n(t)) {  // over how many items each column's numbers are
    out += "| *n* |";
    for (size_t c = 0; c < t.columns.size(); ++c) out += " " + n_text(t, c) + " |";
    out += "\n";
  }
  if (!t.notes.empty() || !t.caveats.empty()) out += "\n";
  for (size_t i = 0; i < t.notes.size(); ++i)
    out += fmt::format("- <sup>{}</sup> {}\n", i + 1, markdown_escape(note_text(t.notes[i])));
  for (const std::string& c : t.caveats) out += "- " + markdown_escape(c) + "\n";
  return out;
}

std::string latex_rows(const Table& t) {
  std::string out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::string line = latex_escape(t.rows[r]) + mark(note_shown(t, r, -1), "$^{", "}$");
    for (size_t c = 0; c < t.columns.size(); ++c)
      line += " & " + marked(t, r, c, "\\textbf{", "}", "\\underline{", "}", "--", " $\\pm$ ") +
              mark(note_shown(t, r, static_cast<int>(c)), "$^{", "}$");
    out += line + " \\\\\n";
  }
  if (any_n(t)) {
    std::string line = "\\midrule\n$n$";
    for (size_t c = 0; c < t.columns.size(); ++c) line += " & " + n_text(t, c);
    out += line + " \\\\\n";
  }
  return out;
}

std::string latex_notes(const Table& t) {
  std::string out;
  for (size_t i = 0; i < t.notes.size(); ++i)
    out += fmt::format("\\par\\footnotesize $^{{{}}}$ {}\n", i + 1, latex_escape(note_text(t.notes[i])));
  for (const std::string& c : t.caveats) out += "\\par\\footnotesize " + latex_escape(c) + "\n";
  return out;
}

std::string latex_generic(const Table& t) {
  std::string out = "\\begin{table}[ht]\n\\centering\n\\begin{tabular}{l" + std::string(t.columns.size(), 'r') +
                    "}\n\\toprule\nModel";
  for (const Column& c : t.columns) out += " & " + c.latex_label;
  out += " \\\\\n\\midrule\n" + latex_rows(t) + "\\bottomrule\n\\end{tabular}\n" + latex_notes(t);
  out += "\\caption{" + latex_escape(t.title) + ". Bold and underlined numbers indicate the best and the second-best results, respectively.}\n";
  out += "\\label{tab:" + t.id + "}\n\\end{table}\n";
  return out;
}

std::string render_latex(const Table& t) {
  const ResultKind* k = find_kind(t.kind);
  return k && k->latex ? k->latex(t) : latex_generic(t);
}

std::string render_csv(const Table& t) {
  // Per column with items: its n (and stderr) beside the values, as "KEY:n" and "KEY:stderr".
  std::vector<size_t> counted;
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (column_n(t, c) != -1) counted.push_back(c);
  std::string out = "model";
  for (const Column& c : t.columns) out += "," + csv_field(c.key);
  for (size_t c : counted) out += "," + csv_field(t.columns[c].key + ":n") + "," + csv_field(t.columns[c].key + ":stderr");
  if (!t.notes.empty()) out += ",settings";  // which rows were made with other settings than the paper's
  out += "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += csv_field(t.rows[r]);
    std::set<int> notes;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      out += "," + (t.values[r][c] ? json(*t.values[r][c]).dump() : std::string());
      if (t.values[r][c] && t.origin[r][c].note > 0) notes.insert(t.origin[r][c].note);
    }
    for (size_t c : counted) {
      const CellOrigin& o = t.origin[r][c];
      const bool have = t.values[r][c].has_value();
      out += "," + (have && o.n >= 0 ? std::to_string(o.n) : std::string()) + "," +
             (have && o.stderr_ ? json(*o.stderr_).dump() : std::string());
    }
    if (!t.notes.empty()) {
      std::string text;
      for (int n : notes) text += (text.empty() ? "" : " | ") + t.notes[static_cast<size_t>(n - 1)];
      out += "," + csv_field(text);
    }
    out += "\n";
  }
  return out;
}

std::string render_tables(const std::vector<Table>& tables, Format format) {
  std::string out;
  for (const Table& t : tables) {
    if (!has_values(t)) continue;  // every cell missing: says nothing, left out
    if (!out.empty()) out += "\n";
    out += format == Format::Markdown ? render_markdown(t) : format == Format::Latex ? render_latex(t) : render_csv(t);
  }
  return out;
}

std::string table_from_files(const std::vector<std::string>& files, const std::vector<std::string>& labels, Format format,
                             bool show_stderr) {
  std::vector<Table> tables = build_tables(read_results(files, labels));
  for (Table& t : tables) t.show_stderr = show_stderr;
  return render_tables(tables, format);
}

}  // namespace foxeval::results
