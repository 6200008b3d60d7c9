#include "tasks/lm_eval/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "data/errors.h"
#include "tasks/results/item_stats.h"

namespace foxeval::lm_eval {
namespace {

using nlohmann::json;

// np.argmax: the first maximum; a NaN counts as the maximum (numpy returns the first NaN).
size_t argmax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return i;
    if (v[i] > v[best]) best = i;
  }
  return best;
}

// Python's mean(): sum left to right from 0, then divide.
double py_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// weighted_mean(items) = sum(lls) / sum(counts); the counts are Python ints (exact).
double weighted_mean(const std::vector<json>& items) {
  double a = 0;
  int64_t b = 0;
  for (const json& it : items) {
    a += it.at(0).get<double>();
    b += it.at(1).get<int64_t>();
  }
  return a / static_cast<double>(b);
}

std::vector<double> numbers(const std::vector<json>& items) {
  std::vector<double> v;
  v.reserve(items.size());
  for (const json& it : items) v.push_back(it.get<double>());
  return v;
}

}  // namespace

json process_results(const TaskConfig& task, const DocScoring& doc, const std::vector<Answer>& answers) {
  json out = json::object();
  const auto wants = [&](const char* m) {
    for (const MetricSpec& s : task.metrics)
      if (s.metric == m) return true;
    return false;
  };
  if (task.output_type == "multiple_choice") {
    if (answers.size() != doc.choice_len.size())
      throw Error(fmt::format("{}: {} answers for {} choices", task.name, answers.size(), doc.choice_len.size()));
    if (doc.gold < 0 || doc.gold >= static_cast<int64_t>(answers.size()))
      throw Error(fmt::format("{}: gold {} out of range for {} choices", task.name, doc.gold, answers.size()));
    std::vector<double> lls, normed;
    for (size_t i = 0; i < answers.size(); ++i) {
      lls.push_back(answers[i].logprob);
      normed.push_back(answers[i].logprob / static_cast<double>(doc.choice_len[i]));
    }
    const size_t gold = static_cast<size_t>(doc.gold);
    if (wants("acc")) out["acc"] = argmax(lls) == gold ? 1.0 : 0.0;
    if (wants("acc_norm")) out["acc_norm"] = argmax(normed) == gold ? 1.0 : 0.0;
  } else if (task.output_type == "loglikelihood") {
    if (answers.size() != 1) throw Error(fmt::format("{}: {} answers for one request", task.name, answers.size()));
    if (wants("perplexity")) out["perplexity"] = answers[0].logprob;
    if (wants("acc")) out["acc"] = answers[0].is_greedy ? 1 : 0;
  } else if (task.output_type == "loglikelihood_rolling") {
    double ll = 0;  // HFLM: sum(window logprobs) in window order
    for (const Answer& a : answers) ll += a.logprob;
    if (wants("word_perplexity")) out["word_perplexity"] = json::array({ll, doc.words});
    if (wants("byte_perplexity")) out["byte_perplexity"] = json::array({ll, doc.bytes});
    if (wants("bits_per_byte")) out["bits_per_byte"] = json::array({ll, doc.bytes});
  } else {
    throw Error(fmt::format("{}: output_type '{}' is not scored by foxeval", task.name, task.output_type));
  }
  return out;
}

double mean_stderr(const std::vector<double>& values) { return python_mean_stderr(values); }

ItemScores metric_items(const MetricSpec& m, const std::vector<std::string>& ids, const std::vector<json>& doc_metrics) {
  ItemScores s;
  s.ids = ids;
  s.aggregation = m.aggregation;
  for (const json& d : doc_metrics) {
    const json& v = d.at(m.metric);
    if (v.is_array()) {  // [loglikelihood, words or bytes]
      s.values.push_back(v.at(0).get<double>());
      s.weights.push_back(static_cast<double>(v.at(1).get<int64_t>()));
    } else {
      s.values.push_back(v.get<double>());
    }
  }
  return s;
}

double aggregate(const std::string& aggregation, const std::vector<json>& items) {
  if (items.empty()) throw Error(fmt::format("aggregation '{}' of no documents", aggregation));
  if (aggregation == "mean") return py_mean(numbers(items));
  if (aggregation == "perplexity") return std::exp(-py_mean(numbers(items)));
  if (aggregation == "weighted_perplexity") return std::exp(-weighted_mean(items));
  if (aggregation == "bits_per_byte") return -weighted_mean(items) / std::log(2.0);
  throw Error(fmt::format("unknown aggregation '{}'", aggregation));
}

double perplexity_stderr_delta_method(const std::vector<json>& items) {
  if (items.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> v = numbers(items);
  return std::exp(-py_mean(v)) * mean_stderr(v);
}

json task_results(const TaskConfig& task, const std::vector<json>& doc_metrics) {
  json out = {{"alias", task.name}};
  for (const MetricSpec& m : task.metrics) {
    std::vector<json> items;
    items.reserve(doc_metrics.size());
    for (const json& d : doc_metrics) items.push_back(d.at(m.metric));
    const std::string key = m.metric + ",none", stderr_key = m.metric + "_stderr,none";
    out[key] = aggregate(m.aggregation, items);
    // lm-eval: a stderr only for more than one document; the closed form for "mean", its seeded
    // bootstrap for "perplexity" (stderr_for_metric), none for the weighted aggregations.
    if (m.aggregation == "mean" && items.size() > 1)
      out[stderr_key] = mean_stderr(numbers(items));
    else if (m.aggregation == "perplexity" && items.size() > 1)
      out[stderr_key] = lm_eval_bootstrap_stderr("perplexity", numbers(items), {});
    else
      out[stderr_key] = "N/A";
  }
  return out;
}

}  // namespace foxeval::lm_eval
