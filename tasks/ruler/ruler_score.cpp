#include "tasks/ruler/ruler_score.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/jsonl_objects.h"
#include "data/resources.h"
#include "tasks/run/result_file.h"
#include "tasks/ruler/ruler_results.h"

namespace foxeval::ruler {

namespace {

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> rows;
  append_jsonl_objects(read_text_file(path), path, rows);
  return rows;
}

template <typename T>
T field(const nlohmann::json& row, const char* key, const std::string& where) {
  if (!row.contains(key)) throw Error(fmt::format("{}: missing field '{}'", where, key));
  try {
    return row.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("{}: field '{}' has the wrong type ({})", where, key, row.at(key).type_name()));
  }
}

}  // namespace

nlohmann::json score_predictions(const ScoreSettings& s) {
  const auto t0 = std::chrono::steady_clock::now();
  const nlohmann::json defs = read_json(
      find_resource({"the RULER task definitions", "tasks/ruler/ruler_tasks.json", {}, "FOXEVAL_RULER_DIR", "ruler_tasks.json"}));
  const nlohmann::json& scoring = defs.at("scoring");

  std::map<std::pair<std::string, int64_t>, std::string> predictions;
  const std::vector<nlohmann::json> preds = read_jsonl(s.predictions_path);
  for (size_t i = 0; i < preds.size(); ++i) {
    const std::string where = fmt::format("{} line {}", s.predictions_path, i + 1);
    auto key = std::make_pair(field<std::string>(preds[i], "task", where), field<int64_t>(preds[i], "doc_id", where));
    if (!predictions.emplace(key, field<std::string>(preds[i], "prediction", where)).second)
      throw Error(fmt::format("{}: a second prediction for {} doc_id {}", where, key.first, key.second));
  }

  // Each doc's score, in doc order (aggregate_metrics sums left to right).
  std::vector<ScoredDoc> scored;
  const std::vector<nlohmann::json> docs = read_jsonl(s.samples_path);
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string where = fmt::format("{} line {}", s.samples_path, i + 1);
    const std::string task = field<std::string>(docs[i], "task", where);
    const int64_t doc_id = field<int64_t>(docs[i], "doc_id", where);
    const nlohmann::json doc = field<nlohmann::json>(docs[i], "doc", where);
    const auto outputs = field<std::vector<std::string>>(doc, "outputs", where + " doc");
    if (outputs.empty()) throw Error(where + ": doc has no outputs to look for");
    const int64_t max_length = field<int64_t>(doc, "max_length", where + " doc");
    auto it = predictions.find({task, doc_id});
    if (it == predictions.end())
      throw Error(fmt::format("{}: no prediction for {} doc_id {} in {}", where, task, doc_id, s.predictions_path));
    scored.push_back({task, max_length, doc_id, score_doc(task, it->second, outputs, scoring)});
    predictions.erase(it);
  }
  if (!predictions.empty())
    throw Error(fmt::format("{}: a prediction for {} doc_id {} has no doc in {}", s.predictions_path,
                            predictions.begin()->first.first, predictions.begin()->first.second, s.samples_path));
  if (docs.empty()) throw Error(s.samples_path + ": no docs");

  nlohmann::json identity = {{"task", "ruler"},
                             {"samples", s.samples_path},
                             {"samples_digest", "sha256:" + sha256_file(s.samples_path)},
                             {"predictions", s.predictions_path},
                             {"predictions_digest", "sha256:" + sha256_file(s.predictions_path)},
                             {"scoring", "lm-eval 0.4.13 string_match_all / string_match_part, aggregate_metrics"}};
  nlohmann::json result = result_header("ruler", identity,
                                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  result["kind"] = "foxeval-ruler";
  result["docs"] = docs.size();
  result.update(aggregate_scores(scored, scoring));
  if (!s.out_path.empty()) write_json_atomic(s.out_path, result);
  return result;
}

std::string score_table(const nlohmann::json& r) {
  std::string out = fmt::format("{:>8}  {:>7}  {:>7}  {:>17}  {:>11}  {:>7}\n", "length", "ruler", "NIAH", "multi-hop tracing",
                                "aggregation", "QA");
  std::vector<std::string> lengths;  // the JSON object's keys sort as text: "16384" < "4096"
  for (const auto& [L, avg] : r.at("ruler").items()) lengths.push_back(L);
  std::sort(lengths.begin(), lengths.end(), [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
  for (const std::string& L : lengths) {
    const nlohmann::json& avg = r.at("ruler").at(L);
    const nlohmann::json& c = r.at("categories").at(L);
    auto cell = [&](const char* k) { return c.contains(k) ? fmt::format("{:.4f}", c.at(k).get<double>()) : std::string("-"); };
    out += fmt::format("{:>8}  {:>7.4f}  {:>7}  {:>17}  {:>11}  {:>7}\n", L, avg.get<double>(), cell("NIAH"), cell("multi-hop tracing"),
                       cell("aggregation"), cell("QA"));
  }
  return out;
}

}  // namespace foxeval::ruler
