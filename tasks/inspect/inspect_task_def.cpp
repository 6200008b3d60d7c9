// `inspect gates`'s definition (tasks/task_def.h): its report figures, merge and suite entry. Gate
// statistics describe a model; none is better or worse, so no metric has a direction.
#include <algorithm>

#include "tasks/inspect/inspect_table.h"
#include "tasks/inspect/inspect_task.h"
#include "tasks/task_def.h"

namespace foxeval::inspect {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval inspect gates` (flags without "--"). The
// suite's cap keeps at most cap documents of --data (--tokens cap x the row length is the command's
// way; here tokens is capped at cap x 65536, LongCrawl64's rows).
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  GatesSettings s;
  s.data_path = t.path("data");
  s.text_path = t.path("text");
  if (s.data_path.empty() == s.text_path.empty()) t.fail("data", "give one of data (token rows) and text (a text file)");
  s.max_tokens = t.integer("tokens", 0, 1);  // 0: the command's default
  if (cap > 0 && !s.data_path.empty())
    s.max_tokens = std::min(s.max_tokens > 0 ? s.max_tokens : kDefaultDataTokens, cap * (int64_t(1) << 16));
  s.bos_id = t.integer("bos-id", s.bos_id, 0);
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    c.fill(s);
    run_gates(s);
  });
}

}  // namespace

const TaskRegistrar registered(TaskDef::records("inspect-gates", table_kind, build_gates_result)
                                   .with_path_keys({"data_path"})
                                   .with_suite_entry(read_suite_entry));

}  // namespace foxeval::inspect
