#include "tasks/results/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/check.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace foxeval {
namespace {

std::string task_of(const json& r) {
  if (r.contains("header") && r["header"].is_object() && r["header"].value("task", json()).is_string())
    return r["header"]["task"].get<std::string>();
  return "";
}

// A differing setting that means other data: a data digest or description, the NIAH needle and
// its question and answer (the model's own digests and files are the model, not the data).
bool is_data_setting(const std::string& difference) {
  const std::string path = difference.substr(0, difference.find(':'));
  const std::string last = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (last == "data" || last == "needle" || last == "answer" || last == "retrieval_question" ||
      last == "haystack" || path.rfind("data/", 0) == 0)
    return last != "docs_evaluated";  // --limit: an item-set difference, caught item by item
  return last.find("digest") != std::string::npos && last.rfind("model_digest", 0) != 0;
}

std::string verdict_of(Direction d, const PairedDifference& p, bool excludes_zero) {
  if (!excludes_zero) return "no clear difference";
  if (d == Direction::None) return "differs";
  return (d == Direction::Higher) == (p.difference > 0) ? "better" : "worse";
}

void collect_json(const fs::path& root, std::map<std::string, std::string>& out) {
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    const std::string rel = fs::relative(e.path(), root).generic_string();
    if (rel == "suite.json") continue;  // a suite's record of what ran, not a result
    out[rel] = e.path().string();
  }
}

std::string number(double v) { return fmt::format("{:.6g}", v); }
std::string signed_number(double v) { return fmt::format("{:+.6g}", v); }

}  // namespace

FileComparison compare_result_files(const std::string& a_path, const std::string& b_path, const std::string& a_label,
                                    const std::string& b_label, const CompareOptions& options) {
  const json a = read_json(a_path), b = read_json(b_path);
  FileComparison out{a_path, b_path, a_label, b_label, task_of(a), {}, {}};
  if (task_of(a) != task_of(b))
    throw Error(fmt::format("{} ({}) and {} ({}): results of different tasks", a_path, task_of(a), b_path, task_of(b)));
  for (const auto& [r, path] : {std::pair<const json&, const std::string&>{a, a_path}, {b, b_path}})
    if (!r.contains("per_item") || !r["per_item"].is_object() || r["per_item"].empty())
      throw Error(fmt::format("{}: no per_item scores to pair (a result made before foxeval kept them; rerun it, "
                              "or `foxeval merge` its parts again)",
                              path));
  const SettingsComparison settings = compare_result_settings(b, a);
  std::vector<std::string> data;
  for (const std::string& d : settings.differ) (is_data_setting(d) ? data : out.notes).push_back(d);
  if (!data.empty()) {
    std::string list;
    for (const std::string& d : data) list += "\n  " + d;
    throw Error(fmt::format("{} and {} were made on different data ({} vs {}):{}\nrefusing to pair their items", a_path,
                            b_path, a_label, b_label, list));
  }
  for (const std::string& n : settings.notes) out.notes.push_back(n);
  for (auto it = a["per_item"].begin(); it != a["per_item"].end(); ++it) {
    const std::string metric = it.key();
    if (!b["per_item"].contains(metric)) {
      out.notes.push_back(fmt::format("{}: only in {}", metric, a_path));
      continue;
    }
    const ItemScores ia = read_per_item(it.value(), a_path + ": " + metric);
    const ItemScores ib = read_per_item(b["per_item"][metric], b_path + ": " + metric);
    std::map<std::string, size_t> in_b;
    for (size_t i = 0; i < ib.ids.size(); ++i)
      if (!in_b.emplace(ib.ids[i], i).second) throw Error(fmt::format("{}: {}: item '{}' twice", b_path, metric, ib.ids[i]));
    ItemScores sa, sb;
    sa.aggregation = ia.aggregation;
    sb.aggregation = ib.aggregation;
    std::set<std::string> seen;
    for (size_t i = 0; i < ia.ids.size(); ++i) {
      if (!seen.insert(ia.ids[i]).second) throw Error(fmt::format("{}: {}: item '{}' twice", a_path, metric, ia.ids[i]));
      auto f = in_b.find(ia.ids[i]);
      if (f == in_b.end()) continue;
      sa.ids.push_back(ia.ids[i]);
      sb.ids.push_back(ia.ids[i]);
      sa.values.push_back(ia.values[i]);
      sb.values.push_back(ib.values[f->second]);
      if (!ia.weights.empty()) sa.weights.push_back(ia.weights[i]);
      if (!ib.weights.empty()) sb.weights.push_back(ib.weights[f->second]);
    }
    MetricComparison m;
    m.metric = metric;
    m.direction = metric_direction(metric, task_of(a));
    m.only_a = static_cast<int64_t>(ia.ids.size() - sa.ids.size());
    m.only_b = static_cast<int64_t>(ib.ids.size() - sb.ids.size());
    if ((m.only_a || m.only_b) && !options.intersect)
      throw Error(fmt::format("{}: {} and {} hold different items ({} shared, {} only in the first, {} only in the "
                              "second); compare the shared ones with --intersect",
                              metric, a_path, b_path, sa.ids.size(), m.only_a, m.only_b));
    if (sa.ids.empty()) {
      out.notes.push_back(fmt::format("{}: no item in common", metric));
      continue;
    }
    // The weights of a weighted aggregation are the items' sizes (words, bytes): the same items
    // must have the same sizes, else they are not the same items.
    if (sa.weights != sb.weights)
      throw Error(fmt::format("{}: {} and {} weigh the same items differently (other documents under the same ids)",
                              metric, a_path, b_path));
    m.paired = paired_difference(sa, sb, options.seed, options.resamples);
    m.excludes_zero = m.paired.low > 0 || m.paired.high < 0;
    m.verdict = verdict_of(m.direction, m.paired, m.excludes_zero);
    out.metrics.push_back(std::move(m));
  }
  for (auto it = b["per_item"].begin(); it != b["per_item"].end(); ++it)
    if (!a["per_item"].contains(it.key())) out.notes.push_back(fmt::format("{}: only in {}", it.key(), b_path));
  return out;
}

std::vector<std::pair<std::string, std::string>> compare_pairs(const std::string& a, const std::string& b,
                                                               std::vector<std::string>* unpaired) {
  const bool da = fs::is_directory(a), db = fs::is_directory(b);
  if (da != db) throw Error(fmt::format("compare: {} and {}: two result files or two folders", a, b));
  if (!da) return {{a, b}};
  std::map<std::string, std::string> fa, fb;
  collect_json(a, fa);
  collect_json(b, fb);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [rel, path] : fa) {
    auto f = fb.find(rel);
    if (f != fb.end()) out.emplace_back(path, f->second);
    else if (unpaired) unpaired->push_back(path);
  }
  for (const auto& [rel, path] : fb)
    if (!fa.count(rel) && unpaired) unpaired->push_back(path);
  if (out.empty()) throw Error(fmt::format("compare: {} and {} have no result file (.json) in common", a, b));
  return out;
}

std::string render_comparisons_markdown(const std::vector<FileComparison>& cs, const CompareOptions& o) {
  std::string out;
  for (const FileComparison& c : cs) {
    out += fmt::format("### {}: {} vs {}\n\n", c.task.empty() ? "result" : c.task, c.b_label, c.a_label);
    out += fmt::format("| Metric | better | n | {} | {} | difference | 95% interval | McNemar p | verdict |\n",
                       c.a_label, c.b_label);
    out += "| :-- | :-: | --: | --: | --: | --: | :-: | --: | :-- |\n";
    for (const MetricComparison& m : c.metrics) {
      const PairedDifference& p = m.paired;
      out += fmt::format("| {} | {} | {}{} | {} | {} | {}{} | [{}, {}] | {} | {} |\n", m.metric,
                         direction_name(m.direction), p.n, m.only_a || m.only_b ? fmt::format(" (of {}/{})", p.n + m.only_a, p.n + m.only_b) : "",
                         number(p.a), number(p.b), signed_number(p.difference), m.excludes_zero ? " *" : "",
                         signed_number(p.low), signed_number(p.high), p.binary ? fmt::format("{:.3g}", p.mcnemar_p) : "–",
                         m.verdict);
    }
    out += fmt::format("\n\\* the paired 95% interval excludes 0 (paired bootstrap over the shared items: {} resamples, "
                       "seed {}; McNemar's exact test for 0/1 items). difference = {} - {}.\n",
                       o.resamples, o.seed, c.b_label, c.a_label);
    for (const std::string& n : c.notes) out += "- " + n + "\n";
    out += "\n";
  }
  return out;
}

json comparisons_json(const std::vector<FileComparison>& cs, const CompareOptions& o) {
  json out = {{"kind", "foxeval-compare"}, {"seed", o.seed}, {"resamples", o.resamples}, {"intersect", o.intersect},
              {"comparisons", json::array()}};
  for (const FileComparison& c : cs) {
    json metrics = json::array();
    for (const MetricComparison& m : c.metrics) {
      const PairedDifference& p = m.paired;
      json e = {{"metric", m.metric}, {"better", direction_name(m.direction)}, {"n", p.n}, {"a", p.a}, {"b", p.b},
                {"difference", p.difference}, {"low", p.low}, {"high", p.high}, {"excludes_zero", m.excludes_zero},
                {"verdict", m.verdict}, {"only_a", m.only_a}, {"only_b", m.only_b}};
      if (p.binary) e["mcnemar"] = {{"a_only", p.a_only}, {"b_only", p.b_only}, {"p", p.mcnemar_p}};
      metrics.push_back(e);
    }
    out["comparisons"].push_back({{"a", c.a_path}, {"b", c.b_path}, {"a_label", c.a_label}, {"b_label", c.b_label},
                                  {"task", c.task}, {"metrics", metrics}, {"notes", c.notes}});
  }
  return out;
}

}  // namespace foxeval
