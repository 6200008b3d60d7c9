// `foxeval suite check OUT --baseline OUT2`: every result of the baseline suite (its suite.json's
// tasks) checked against the same file under OUT by `foxeval check`'s machinery (tasks/results/check.h).
#pragma once
#include <string>
#include <vector>

#include "tasks/results/check.h"

namespace foxeval::suite {

struct FileCheck {
  std::string result;   // relative to the folders: "{label}/{name}.json"
  std::string problem;  // "missing in OUT", "not in the baseline": then `report` is empty
  CheckReport report;
};

// Pairs the folders' results by the baseline's suite.json (and OUT's, for results only OUT has).
// Errors name the folder without a suite.json.
std::vector<FileCheck> check_suite(const std::string& out_dir, const std::string& baseline_dir, const CheckOptions& options);

}  // namespace foxeval::suite
