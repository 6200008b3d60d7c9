// `foxeval suite run`: every task of a plan for every model, each model loaded once and handed to
// its tasks' run functions in-process (TaskDef::suite_entry, tasks/suite/suite_entry.h). Each task
// runs through its own Runner (journal, --resume, ranks of a distributed run); the suite adds the
// order, the skipping of finished tasks and the outputs over all of them:
//   OUT/{label}/{name}.json (or the folder OUT/{label}/{name}/ of a task whose command writes one)
//   OUT/tables.md, tables.tex, tables.csv, report.html   (tasks/results/results_table.h, tasks/results/report.h)
//   OUT/suite.json   what ran: the suite's settings, models and their digests, each task's status and wall time
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "models/model.h"
#include "tasks/suite/suite_plan.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::suite {

struct SuiteRunSettings {
  std::string out_dir;
  bool resume = false;       // skip tasks whose result exists; a task with a journal resumes from it
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  RunOptions run;            // device and dtype resolved (cli/run_options.h)
  bool writes_outputs = true;  // false on ranks other than 0 of a distributed run: tables, report, suite.json
  // Test hook (the kill-and-resume test): the task OUT/{label}/{name} given here stops (exit 3,
  // resumable) after stop_after items, as the task command's --stop-after does.
  std::string stop_at;
  int64_t stop_after = -1;
};

// Where an entry's result file is, relative to OUT (tables, report and `suite check` read it).
std::string result_file(const std::string& label, const SuiteEntry& entry);

// Runs the plan; returns suite.json's content. Throws RunInterrupted (tasks/run/runner.h) when a task was
// stopped: what is finished stays, and --resume continues.
nlohmann::json run_suite(const SuitePlan& plan, const SuiteRunSettings& settings);

}  // namespace foxeval::suite
