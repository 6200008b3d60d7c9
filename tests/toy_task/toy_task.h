// A toy task, added as README's "Adding a task" says: this folder (its definition, its run, its
// tables) plus one cli file (cli_toy.cpp). Nothing else in foxeval names it, and yet `table`,
// `report`, `check`, `compare`, `merge`, identity and the announcement know it (tests/test_task_def.cpp,
// tests/cli_toy_task_test.sh). Its data: a text file of numbers, one an item; its record: the
// number times --scale; its result: their mean (higher is better) and an error (lower is better).
// `foxeval suite` runs it as `task: toy` (tests/cli_toy_task_test.sh).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "models/model.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::toy {

struct ToySettings {
  std::string data_path, out_path;
  double scale = 1.0;
  int64_t limit = 0;     // --limit: the first numbers only (0: all)
  bool verbose = false;  // --toy-verbose: prints each record; changes no number
  RunOptions run;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  bool resume = false;
};

// Runs the toy task through the one runner (resume, shards, atomic result) and returns its result.
nlohmann::json run_toy(const ToySettings& s);

}  // namespace foxeval::toy
