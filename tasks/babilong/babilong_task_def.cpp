// `babilong`'s definition (tasks/task_def.h): what table, check, merge and identity know of it.
#include "tasks/babilong/babilong_run.h"
#include "tasks/babilong/babilong_table.h"
#include "tasks/task_def.h"

namespace foxeval::babilong {
namespace {

foxeval::TaskDef definition() {
  foxeval::TaskDef d;
  d.name = "babilong";
  d.tables = table_kind;
  d.build = build_result;
  // acc/TASK/LENGTH and the mean over tasks per length (lm-eval's acc: higher is better).
  d.directions = {{"acc/*/*", Direction::Higher}, {"mean_by_length/*", Direction::Higher}};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::babilong
