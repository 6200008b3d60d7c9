// `ruler`'s definition (tasks/task_def.h): what table, check, merge and identity know of it.
#include "tasks/ruler/ruler_run.h"
#include "tasks/ruler/ruler_table.h"
#include "tasks/task_def.h"

namespace foxeval::ruler {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "ruler";
  d.tables = table_kind;
  d.build = build_result;
  // lm-eval's string_match_all / string_match_part (higher is better): per task and length, the
  // group's mean per length, the categories (NIAH, multi-hop tracing, aggregation, QA) per length.
  d.directions = {{"scores/*", Direction::Higher}, {"ruler/*", Direction::Higher}, {"categories/*", Direction::Higher}};
  // The data's bytes are in the identity through the samples' digest: where they lie is information.
  d.information_flags = {"--haystack", "--words", "--punkt", "--squad", "--hotpot"};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::ruler
