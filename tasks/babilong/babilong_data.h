// Where BABILong's documents are: `--data hf` (the default) looks for the split (config = length,
// split = task) of RMT-team/babilong-1k-samples in the local Hugging Face caches (the datasets Arrow
// cache, then the hub cache), never downloading; `--data DIR` reads DIR/{length}/{task}.jsonl,
// {task}.parquet or {task}-*.parquet (the hub repository's own layout, e.g. a snapshot folder).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "tasks/babilong/babilong_def.h"

namespace foxeval::babilong {

struct SplitData {
  std::string length, task;
  std::vector<Doc> docs;    // in dataset order (doc_id = index)
  std::string description;  // for messages: where it was found
  nlohmann::json identity;  // source, files, digest
};

// The split, or nullopt when it is nowhere (`looked` gets the places tried). Errors: a file that
// cannot be read, a row without input/question/target strings (naming file, row and field).
std::optional<SplitData> find_split(const std::string& data, const std::string& length, const std::string& task,
                                    std::vector<std::string>* looked);

}  // namespace foxeval::babilong
