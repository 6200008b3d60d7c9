// `babilong`'s definition (tasks/task_def.h): what table, check, merge, identity and suite know of it.
#include <algorithm>

#include "tasks/babilong/babilong_run.h"
#include "tasks/babilong/babilong_table.h"
#include "tasks/task_def.h"

namespace foxeval::babilong {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval babilong run` (flags without "--"; data: a
// folder or hf). The suite's cap is --limit.
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  RunSettings s;
  s.data = t.path_or("data", "hf", s.data);
  s.tasks = t.texts("tasks");
  s.lengths = t.texts("lengths");
  s.limit = t.integer("limit", 0, 1);
  if (cap > 0) s.limit = s.limit == 0 ? cap : std::min(s.limit, cap);
  s.max_length = t.integer("max-length", 0, 17, int64_t(1) << 20);
  s.generation.max_batch = t.integer("batch-size", s.generation.max_batch, 1, 1 << 20);
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    c.fill(s);
    s.stop_after = c.stop_after > 0 ? c.stop_after : -1;
    run_babilong(s);
  });
}

}  // namespace

// acc/TASK/LENGTH and the mean over tasks per length (lm-eval's acc: higher is better).
const TaskRegistrar registered(
    foxeval::TaskDef::records("babilong", table_kind, build_result)  // babilong::TaskDef is a BABILong task's data
        .with_directions({{"acc/*/*", Direction::Higher}, {"mean_by_length/*", Direction::Higher}})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::babilong
