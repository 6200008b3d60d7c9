// eval.py's scorer and scorer_e (the metric table itself is in metrics.cpp).
#include <algorithm>
#include <string>

#include "data/errors.h"
#include "tasks/longbench/metrics.h"
#include "data/python/numbers.h"

namespace foxeval::longbench {

namespace {

void check_sizes(const std::string& dataset, size_t predictions, size_t answers, size_t all_classes) {
  if (answers != predictions || all_classes != predictions)
    throw Error("longbench: scoring \"" + dataset + "\": " + std::to_string(predictions) + " predictions, " +
                std::to_string(answers) + " answer lists, " + std::to_string(all_classes) +
                " all_classes lists; they must be one per record");
  if (predictions == 0) throw Error("longbench: scoring \"" + dataset + "\": no records (eval.py divides by zero)");
}

}  // namespace

// One record as eval.py scores it: first line, max over answers starting from 0.
double record_score(const std::string& dataset, const std::string& prediction, const std::vector<std::string>& answers,
                    const std::vector<std::string>& all_classes) {
  const std::string line = first_line(prediction);
  double score = 0.0;
  // Python's max(score, x) keeps `score` unless x is greater.
  for (const auto& answer : answers) score = std::max(score, metric(dataset, line, answer, all_classes));
  return score;
}

double score_dataset(const std::string& dataset, const std::vector<std::string>& predictions,
                     const std::vector<std::vector<std::string>>& answers,
                     const std::vector<std::vector<std::string>>& all_classes) {
  check_sizes(dataset, predictions.size(), answers.size(), all_classes.size());
  const std::vector<std::string>& classes = all_classes.back();  // eval.py: the last record's list
  double total_score = 0.0;
  for (size_t i = 0; i < predictions.size(); ++i) total_score += record_score(dataset, predictions[i], answers[i], classes);
  return python_round2(100 * total_score / static_cast<double>(predictions.size()));
}

nlohmann::json score_dataset_e(const std::string& dataset, const std::vector<std::string>& predictions,
                               const std::vector<std::vector<std::string>>& answers,
                               const std::vector<std::vector<std::string>>& all_classes,
                               const std::vector<int64_t>& lengths) {
  check_sizes(dataset, predictions.size(), answers.size(), all_classes.size());
  if (lengths.size() != predictions.size())
    throw Error("longbench: scoring \"" + dataset + "\" (LongBench-E): " + std::to_string(lengths.size()) +
                " lengths for " + std::to_string(predictions.size()) + " records");
  const std::vector<std::string>& classes = all_classes.back();
  std::vector<double> short_scores, middle_scores, long_scores;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const double score = record_score(dataset, predictions[i], answers[i], classes);
    if (lengths[i] < 4000) short_scores.push_back(score);
    else if (lengths[i] < 8000) middle_scores.push_back(score);
    else long_scores.push_back(score);
  }
  // 100 * np.mean(...) is np.float64 arithmetic, then NumPy's round.
  nlohmann::json out = nlohmann::json::object();
  out["0-4k"] = numpy_round2(100 * numpy_mean(short_scores));
  out["4-8k"] = numpy_round2(100 * numpy_mean(middle_scores));
  out["8k+"] = numpy_round2(100 * numpy_mean(long_scores));
  return out;
}

}  // namespace foxeval::longbench
