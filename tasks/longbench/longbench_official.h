// LongBench's files in the official layout: pred.py's {task}.jsonl (one json.dumps(...,
// ensure_ascii=False) line per record: pred, answers, all_classes, length) with an empty
// {task}.jsonl.done sentinel, and eval.py's result.json (json.dump(scores, ensure_ascii=False,
// indent=4)). And the scores of such a folder, as eval.py computes them.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace foxeval::longbench {

// One prediction line, keys in pred.py's order (no trailing newline).
std::string pred_line(const nlohmann::json& record);

// The run's result from its records (tasks/run/runner.h ResultBuilder; registered as "longbench").
// identity: "tasks" (order), "e". records: {"task","index","pred","answers","all_classes","length",...}.
// Result: {"scores": eval.py's dict, "score_errors": {task: why} for tasks eval.py cannot score
// (e.g. a classification task without all_classes), "predictions": {task: [records in data order]}, "tasks": [...]}.
nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

// Writes OUT/{task}.jsonl + .done for every task of `result` and OUT/result.json (its scores), each
// atomically; a task's .done only after its .jsonl is in place.
void write_official_files(const nlohmann::json& result, const std::string& out_dir);

// eval.py over a folder: every *.jsonl with a .done beside it, dataset = the name up to its first
// '.', scored with scorer (or scorer_e when `e`).
struct PredDirScores {
  nlohmann::json scores;                         // eval.py's result.json: {dataset: score}
  std::map<std::string, std::string> unscored;   // {file name: why}: no .done, bad line, unknown task, ...
};
// Every file that can be scored is, whatever the others hold; the reasons for the rest name the
// file and line. Error only when the folder is missing or holds no .jsonl at all.
PredDirScores score_pred_dir(const std::string& dir, bool e);

}  // namespace foxeval::longbench
