// `foxeval ruler score`: the scores of given predictions for `foxeval ruler samples` docs, as lm-eval
// 0.4.13 scores and aggregates them (ruler_metrics.h): per task and length, the `ruler` mean over the
// tasks, and per category (NIAH / multi-hop tracing / aggregation / QA), with the common header.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace foxeval::ruler {

struct ScoreSettings {
  std::string samples_path;      // JSONL from `foxeval ruler samples`: {"task", "doc_id", "doc"}
  std::string predictions_path;  // JSONL: {"task", "doc_id", "prediction"}, one per doc
  std::string out_path;          // result JSON ("" = print only)
};

// foxeval::Error naming the file, line and field for bad input, a doc without a prediction or a
// prediction without a doc.
nlohmann::json score_predictions(const ScoreSettings& s);

// The per-length table of the categories and the `ruler` mean, as text.
std::string score_table(const nlohmann::json& result);

}  // namespace foxeval::ruler
