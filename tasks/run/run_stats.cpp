#include "tasks/run/run_stats.h"

#include <stdexcept>

namespace foxeval {
namespace {

std::vector<RunStatsKind>& kinds() {  // a function's static: registrations run at static initialization
  static std::vector<RunStatsKind> k;
  return k;
}

}  // namespace

bool register_run_stats_kind(RunStatsKind kind) {
  for (const RunStatsKind& k : kinds())
    if (k.name == kind.name) throw std::logic_error("run statistic '" + kind.name + "' registered twice");
  kinds().push_back(std::move(kind));
  return true;
}

const std::vector<RunStatsKind>& run_stats_kinds() { return kinds(); }

}  // namespace foxeval
