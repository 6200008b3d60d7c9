// Statistics of a run beside its records (the runner's RunnerSettings::stats), by name: what a
// run measured that is no item's record, such as FoX's adaptive-pruning counts. A plain struct of
// callbacks, so the runner (tasks/run/runner.h) sums and writes them without knowing what made them.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace foxeval {

// A statistic of the run beside its records, by name: header.<name> of the result. Each process
// (shard, rank) reads its own counts once at complete(); a shard part or a rank's post carries them
// under <name>, and the result's header holds header(the sum over every process). FoX's pruning
// counts are one (tasks/run/pruning_header.h pruning_stats): the runner itself knows no model.
// How one statistic's counts add up and become its header field, by name: all `foxeval merge`
// needs of a statistic it finds in shard parts, where no model is at hand. Each kind registers once
// (register_run_stats_kind, at static initialization, beside the code that counts it).
struct RunStatsKind {
  std::string name;  // the header field and the part's field, e.g. "pruning"
  // Two processes' counts summed (null + x = x); throws Error for counts that do not add up.
  std::function<nlohmann::json(const nlohmann::json&, const nlohmann::json&)> add;
  std::function<nlohmann::json(const nlohmann::json&)> header;  // header.<name> from non-null counts
};
// Registers `kind` (a second kind of the same name is a logic_error); returns true, for a static
// initializer: `const bool registered = register_run_stats_kind({...});`.
bool register_run_stats_kind(RunStatsKind kind);
const std::vector<RunStatsKind>& run_stats_kinds();  // in name order

struct RunStatsSource {
  std::string name;                        // the header field, e.g. "pruning"
  std::function<nlohmann::json()> counts;  // this process's counts; null: nothing to report
  // Two processes' counts summed (null + x = x); throws Error for counts that do not add up.
  std::function<nlohmann::json(const nlohmann::json&, const nlohmann::json&)> add;
  std::function<nlohmann::json(const nlohmann::json&)> header;  // header.<name> from non-null counts
};

}  // namespace foxeval
