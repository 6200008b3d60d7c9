#include "tasks/run/run_stats.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

#include "data/errors.h"
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

const RunStatsKind& run_stats_kind(const std::string& name) {
  for (const RunStatsKind& k : kinds().entries())
    if (k.name == name) return k;
  throw std::logic_error("run statistic '" + name + "' is not registered (register_run_stats_kind)");
}

int64_t add_counts(int64_t a, int64_t b, const std::string& field) {
  if (a > std::numeric_limits<int64_t>::max() - b)
    throw Error(fmt::format("{}: {} + {} does not fit a 64-bit count", field, a, b));
  return a + b;
}

}  // namespace foxeval
