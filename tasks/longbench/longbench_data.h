// LongBench records as users have them: the released data/ folder, {task}.jsonl (or {task}_e.jsonl
// for LongBench-E), else the same records as {task}.parquet. Every record is checked for the fields
// pred.py and eval.py use, so a bad file fails before any model time is spent.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "data/data_source.h"

namespace foxeval::longbench {

struct Record {
  int64_t index = 0;    // the record's place in its file, from 0 (its line for jsonl)
  nlohmann::json data;  // the whole record: fills the template; answers/all_classes/length go to the output
};

// DIR/{task}.jsonl (DIR/{task}_e.jsonl when `e`), else the .parquet beside it; the error names both
// when neither exists. DIR may also be LongBench's data.zip itself: its member data/{task}.jsonl
// (also at the top or in one other folder: zips made from inside data/, or of a renamed folder),
// read in place.
DataSource task_data_source(const std::string& dir, const std::string& task, bool e);

// Reads and checks every record: input, context, dataset, language, _id strings; answers a list of
// JSON scalars (LongBench's passage_count files carry numbers; they are scored as Python's str()); length an integer; all_classes null or a list of strings. Errors name the file, the line
// (or row) and the field.
std::vector<Record> read_task_records(const DataSource& source);

// all_classes as the metrics take it (null -> empty).
std::vector<std::string> all_classes_of(const nlohmann::json& record);
// The answers as metrics.py sees them: Python's str() of each (15 -> "15", 1.5 -> "1.5").
std::vector<std::string> answers_of(const nlohmann::json& record);

}  // namespace foxeval::longbench
