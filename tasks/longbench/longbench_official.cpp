#include "tasks/longbench/longbench_official.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/longbench/longbench_config.h"
#include "tasks/longbench/longbench_data.h"
#include "tasks/longbench/longbench_prompt_set.h"
#include "tasks/longbench/metrics.h"
#include "data/python/json_dumps.h"
#include "data/python/numbers.h"
#include "tasks/results/item_stats.h"
#include "tasks/run/runner.h"

namespace fs = std::filesystem;

namespace foxeval::longbench {

std::string pred_line(const nlohmann::json& r) {
  return fmt::format("{{\"pred\": {}, \"answers\": {}, \"all_classes\": {}, \"length\": {}}}", python_json_dumps(r.at("pred")),
                     python_json_dumps(r.at("answers")), python_json_dumps(r.at("all_classes")),
                     python_json_dumps(r.at("length")));
}

namespace {

struct TaskColumns {
  std::vector<std::string> ids;  // the records' "index"
  std::vector<std::string> predictions;
  std::vector<std::vector<std::string>> answers, all_classes;
  std::vector<int64_t> lengths;
  bool last_classes_null = false;  // eval.py scores every record with the last record's all_classes

  // One record's fields; `e` needs its length. Errors name the field (the caller adds the place).
  void add(const nlohmann::json& r, bool e) {
    if (!r.at("pred").is_string()) throw Error("field 'pred' must be a string");
    predictions.push_back(r.at("pred").get<std::string>());
    ids.push_back(r.contains("index") ? r["index"].dump() : std::to_string(ids.size()));
    answers.push_back(answers_of(r));
    all_classes.push_back(all_classes_of(r));
    last_classes_null = r.at("all_classes").is_null();
    if (e) {  // eval.py reads the lengths only for LongBench-E's buckets
      if (!r.contains("length") || !r.at("length").is_number_integer())
        throw Error("field 'length' (an integer) is needed for LongBench-E's buckets");
      lengths.push_back(r.at("length").get<int64_t>());
    }
  }
};

nlohmann::json score_task(const std::string& task, const TaskColumns& c, bool e) {
  require_metric(task);
  // classification_score iterates all_classes: eval.py fails on None (TypeError) instead of scoring.
  if (uses_all_classes(task) && c.last_classes_null)
    throw Error(fmt::format("\"{}\" is scored with classification_score, which needs all_classes, but the last record "
                            "has \"all_classes\": null (eval.py stops with a TypeError there)", task));
  if (e) return score_dataset_e(task, c.predictions, c.answers, c.all_classes, c.lengths);
  return score_dataset(task, c.predictions, c.answers, c.all_classes);
}

// per_item (tasks/results/item_stats.h) of a task's score: each record's score as eval.py's scorer takes
// it, times 100 (the score's units), under "scores/TASK"; for LongBench-E one entry per length
// bucket ("scores/TASK/0-4k", ...; an empty bucket has none).
void add_per_item(const std::string& task, const TaskColumns& c, bool e, nlohmann::json& per_item) {
  std::map<std::string, ItemScores> by_key;
  std::vector<std::string> order;
  for (size_t i = 0; i < c.predictions.size(); ++i) {
    std::string key = "scores/" + task;
    if (e) key += c.lengths[i] < 4000 ? "/0-4k" : c.lengths[i] < 8000 ? "/4-8k" : "/8k+";
    if (!by_key.count(key)) order.push_back(key);
    ItemScores& s = by_key[key];
    s.ids.push_back(c.ids[i]);
    s.values.push_back(100 * record_score(task, c.predictions[i], c.answers[i], c.all_classes.back()));
  }
  for (const std::string& key : order) per_item[key] = per_item_entry(by_key[key]);
}

}  // namespace

nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  const bool e = identity.at("e").get<bool>();
  std::map<std::string, TaskColumns> columns;
  nlohmann::json predictions = nlohmann::json::object();
  for (const nlohmann::json& r : records) {
    const std::string task = r.at("task").get<std::string>();
    columns[task].add(r, e);
    predictions[task].push_back(r);
  }
  nlohmann::json scores = nlohmann::json::object(), errors = nlohmann::json::object(),
                 per_item = nlohmann::json::object();
  for (const std::string& task : identity.at("tasks").get<std::vector<std::string>>()) {
    if (!columns.count(task)) continue;  // --limit 0
    // A task eval.py cannot score still has its predictions written in the official layout; the
    // reason is kept instead of a score.
    try {
      scores[task] = score_task(task, columns.at(task), e);
      add_per_item(task, columns.at(task), e, per_item);
    } catch (const Error& err) {
      errors[task] = err.what();
    }
  }
  return {{"tasks", identity.at("tasks")}, {"scores", scores},         {"score_errors", errors},
          {"per_item", per_item},           {"predictions", predictions}};
}

void write_official_files(const nlohmann::json& result, const std::string& out_dir) {
  const std::vector<std::string> tasks = result.at("tasks").get<std::vector<std::string>>();
  for (const std::string& task : tasks) check_task_name(task);  // before anything is written
  fs::create_directories(out_dir);
  for (const std::string& task : tasks) {
    if (!result.at("predictions").contains(task)) continue;
    std::string text;
    for (const nlohmann::json& r : result.at("predictions").at(task)) text += pred_line(r) + "\n";
    const std::string path = (fs::path(out_dir) / (task + ".jsonl")).string();
    write_text_atomic(path, text);
    write_text_atomic(path + ".done", "");
  }
  write_text_atomic((fs::path(out_dir) / "result.json").string(), python_json_dumps(result.at("scores"), 4));
}

namespace {

// One prediction file as eval.py reads it; errors name the file and line.
TaskColumns read_pred_file(const fs::path& file, bool e) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read", file.string()));
  TaskColumns c;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = fmt::format("{} line {}", file.string(), line_no);
    nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object()) throw Error(fmt::format("{}: not a JSON object", where));
    for (const char* field : {"pred", "answers", "all_classes"})
      if (!r.contains(field)) throw Error(fmt::format("{}: field '{}' is missing", where, field));
    try {
      c.add(r, e);
    } catch (const Error& err) {
      throw Error(fmt::format("{}: {}", where, err.what()));
    }
  }
  return c;
}

}  // namespace

PredDirScores score_pred_dir(const std::string& dir, bool e) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(fmt::format("{}: not a folder of LongBench predictions", dir));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // eval.py follows os.listdir's order; sorted here, for stable output
  PredDirScores out;
  out.scores = nlohmann::json::object();
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    if (!fs::is_regular_file(file.string() + ".done", ec)) {
      out.unscored[name] = "incomplete: no .done sentinel beside it (pred.py may still be writing it); skipped, as eval.py does";
      continue;
    }
    const std::string dataset = name.substr(0, name.find('.'));
    // Every other file is still scored when one cannot be: the reasons are returned beside the scores.
    try {
      out.scores[dataset] = score_task(dataset, read_pred_file(file, e), e);
    } catch (const Error& err) {
      out.unscored[name] = err.what();
    }
  }
  if (out.scores.empty() && out.unscored.empty())
    throw Error(fmt::format("{}: no {{task}}.jsonl prediction files (pred.py's pred/<model> folder)", dir));
  return out;
}

}  // namespace foxeval::longbench
