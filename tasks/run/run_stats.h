// Statistics of a run beside its records (the runner's RunnerSettings::stats), by name: what a
// run measured that is no item's record, such as FoX's adaptive-pruning counts. A plain struct of
// callbacks, so the runner (tasks/run/runner.h) sums and writes them without knowing what made them.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace foxeval {

// A statistic of the run beside its records, by name: header.<name> of the result. Each process
// (shard, rank) reads its own counts once at complete(); a shard part or a rank's post carries them
// under <name>, and the result's header holds header(the sum over every process). FoX's pruning
// counts are one (tasks/run/pruning_header.h pruning_stats): the runner itself knows no model.
struct RunStatsSource {
  std::string name;                        // the header field, e.g. "pruning"
  std::function<nlohmann::json()> counts;  // this process's counts; null: nothing to report
  // Two processes' counts summed (null + x = x); throws Error for counts that do not add up.
  std::function<nlohmann::json(const nlohmann::json&, const nlohmann::json&)> add;
  std::function<nlohmann::json(const nlohmann::json&)> header;  // header.<name> from non-null counts
};

}  // namespace foxeval
