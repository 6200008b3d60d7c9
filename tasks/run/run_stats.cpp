#include "tasks/run/run_stats.h"

#include "data/named_registry.h"

namespace foxeval {
namespace {

NamedRegistry<RunStatsKind>& kinds() {
  static NamedRegistry<RunStatsKind> r("run statistic", [](const RunStatsKind& k) { return k.name; });
  return r;
}

}  // namespace

bool register_run_stats_kind(RunStatsKind kind) {
  kinds().add(std::move(kind));
  return true;
}

const std::vector<RunStatsKind>& run_stats_kinds() { return kinds().entries(); }

}  // namespace foxeval
