// Statistics of a run beside its records (the runner's RunnerSettings::stats), by name: what a
// run measured that is no item's record, such as FoX's adaptive-pruning counts or what a
// generation task generated. The runner (tasks/run/runner.h) and `foxeval merge` add them up and
// write them without knowing what made them.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace foxeval {

// How one statistic's counts add up and become header.<name> of the result: all the runner and
// `foxeval merge` (which has no model at hand) need of it. Each kind registers once, at static
// initialization, beside the code that counts it (tasks/run/pruning_header.cpp,
// tasks/run/generation_loop.cpp).
struct RunStatsKind {
  std::string name;  // the header field, and the field of a shard part or a rank's post, e.g. "pruning"
  // Two processes' counts summed (null + x = x); throws Error for counts that do not add up.
  std::function<nlohmann::json(const nlohmann::json&, const nlohmann::json&)> add;
  std::function<nlohmann::json(const nlohmann::json&)> header;  // header.<name> from non-null counts
};
// Registers `kind` (a second kind of the same name is a logic_error); returns true, for a static
// initializer: `const bool registered = register_run_stats_kind({...});`.
bool register_run_stats_kind(RunStatsKind kind);
const std::vector<RunStatsKind>& run_stats_kinds();  // in name order
// The kind registered as `name`; a logic_error where none is (a source without its kind).
const RunStatsKind& run_stats_kind(const std::string& name);

// One process's source of a registered statistic: each process (shard, rank) reads its own counts
// once at complete(); a shard part or a rank's post carries them under <name>, and the result's
// header holds the kind's header(the sum over every process).
struct RunStatsSource {
  std::string name;                        // a registered RunStatsKind's name
  std::function<nlohmann::json()> counts;  // this process's counts; null: nothing to report
};

// a + b for two non-negative counts of `field` read from a part or a post (a file a user may have
// edited): Error naming the field where the sum does not fit an int64.
int64_t add_counts(int64_t a, int64_t b, const std::string& field);

}  // namespace foxeval
