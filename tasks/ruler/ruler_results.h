// RULER's numbers from scored docs, the same for `ruler score` (given predictions) and `ruler run`
// (generated ones): lm-eval 0.4.13's per task and length means (aggregate_metrics, the metric named
// by the length), the `ruler` group score at each length (the unweighted mean over the tasks,
// ruler.yaml weight_by_size: False), the categories of ruler_tasks.json's "scoring" (NIAH /
// multi-hop tracing / aggregation / QA), and per_item (tasks/results/item_stats.h) for `foxeval compare`.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxeval::ruler {

struct ScoredDoc {
  std::string task;
  int64_t max_length = 0;  // the doc's length bucket (lm-eval's metric name)
  int64_t doc_id = 0;      // lm-eval's doc_id: the row in the task's dataset, lengths concatenated
  double score = 0;
};

// `docs` in the order lm-eval sums them (each task's docs in doc_id order); tasks are listed in
// the order they first appear. Returns {"tasks", "lengths" (ascending), "scores": {task: {L: mean}},
// "n": {task: {L: docs}}, "ruler": {L: mean}, "categories": {L: {category: mean}}, "per_item"}.
// per_item keys: "scores/TASK/L" (one value per doc, id "TASK/L/DOC_ID") and, where every task at L
// has the same number of docs (so the mean of the task means is the mean of the docs), "ruler/L".
// `scoring`: ruler_tasks.json's "scoring" object.
nlohmann::json aggregate_scores(const std::vector<ScoredDoc>& docs, const nlohmann::json& scoring);

// The scoring function of a task's YAML (process_results_part for the QA tasks, else
// process_results) applied to one prediction.
double score_doc(const std::string& task, const std::string& prediction, const std::vector<std::string>& outputs,
                 const nlohmann::json& scoring);

}  // namespace foxeval::ruler
