// `inspect gates`'s definition (tasks/task_def.h): its report figures and merge. Gate statistics
// describe a model; none is better or worse, so no metric has a direction.
#include "tasks/inspect/inspect_table.h"
#include "tasks/inspect/inspect_task.h"
#include "tasks/task_def.h"

namespace foxeval::inspect {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "inspect-gates";
  d.tables = table_kind;
  d.build = build_gates_result;
  d.path_keys = {"data_path"};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::inspect
