// `longbench`'s definition (tasks/task_def.h): what table, check, merge, identity and CI know of it.
#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/longbench_table.h"
#include "tasks/task_def.h"

namespace foxeval::longbench {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "longbench";
  d.tables = table_kind;
  d.build = build_result;
  d.directions = {{"scores/*", Direction::Higher}};  // every task's score, and LongBench-E's buckets
  d.path_keys = {"data_dir", "pred_dir", "config_dir"};
  d.information_flags = {"--config"};  // the prompt files count by their digests
  d.paper_settings = "longbench/longbench_table.json";
  d.baselines = {{"e2e-longbench.json",
                  "longbench/run.json",
                  {"longbench", "run", "--model", "{trained}", "--data", "tests/fixtures/longbench/data", "--tasks",
                   "qasper,multifieldqa_en,gov_report,trec,samsum,lcc,repobench-p", "--limit", "2", "--max-length",
                   "700", "--max-new-tokens", "24", "--out", "{out}/longbench"}}};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::longbench
