// A suite file read into what `foxeval suite run` does: the models, and each task entry's settings
// read by its task (TaskDef::suite_entry, tasks/suite/suite_entry.h), all checked before any model
// loads.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data/path_overlap.h"
#include "tasks/suite/suite_file.h"
#include "tasks/suite/suite_entry.h"

namespace foxeval::suite {

struct SuiteModel {
  std::string label;
  std::string model;  // a checkpoint folder (resolved against the suite file's folder) or a repo id
  std::string where;  // "FILE:LINE: models[0]" for messages
};

struct SuiteEntry {
  std::string task, name;  // name: the output's name under OUT/{label}/ (default: the task's)
  std::vector<std::string> models;  // the labels it runs for (models: [a, b]); empty: every model
  PreparedTask prepared;
  nlohmann::json settings;                    // the entry as read (after ${vars}), for the resume check
  std::map<std::string, std::string> paths;   // its settings read as paths, resolved (TaskSettings::paths)
};

struct SuitePlan {
  std::string file, title;
  std::string device = "auto", dtype = "auto";
  int64_t cap = 0;      // 0: none
  std::string log_pruning_tolerance;
  std::vector<SuiteModel> models;
  std::vector<SuiteEntry> tasks;
  nlohmann::json settings;        // the file after ${vars}, as suite.json records it
  std::vector<NamedPath> inputs;  // every path the tasks read, and the model folders
};

struct PlanOverrides {
  std::vector<std::pair<std::string, std::string>> models;  // --model LABEL=PATH: replace the file's models
  int64_t cap = -1;                                          // --cap N (>= 0): replace the file's cap
  std::string device, dtype;                                 // non-empty: replace the file's
};

// The plan of a read suite (vars substituted). Errors name the file, line and field.
SuitePlan make_plan(const SuiteText& text, const PlanOverrides& overrides);

}  // namespace foxeval::suite
