// `longbench`'s definition (tasks/task_def.h): what table, check, merge, identity, CI and suite know of it.
#include <algorithm>

#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/longbench_run.h"
#include "tasks/longbench/longbench_table.h"
#include "tasks/task_def.h"

namespace foxeval::longbench {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval longbench run` (flags without "--"); its
// output is a folder, as the command's --out (run.json inside). The suite's cap is --limit.
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  RunSettings s;
  s.prompts.data_dir = t.required_path("data");
  s.prompts.config_dir = t.path("config");
  s.prompts.tasks = t.joined("tasks");
  s.prompts.e = t.flag("e", false);
  s.prompts.max_length = t.integer("max-length", s.prompts.max_length, 1, int64_t(1) << 20);
  s.prompts.limit = t.integer("limit", -1, 1);
  if (cap > 0) s.prompts.limit = s.prompts.limit < 0 ? cap : std::min(s.prompts.limit, cap);
  s.max_new_tokens = t.integer("max-new-tokens", 0, 1, int64_t(1) << 20);
  s.generation.max_batch = t.integer("batch-size", s.generation.max_batch, 1, 1 << 20);
  suite::PreparedTask p;
  p.out_suffix = "";
  p.result_in_folder = "run.json";
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_dir = c.out_path;
    c.fill_run(s);
    s.stop_after = c.stop_after;
    run_longbench(s);
  };
  return p;
}

}  // namespace

const TaskRegistrar registered(
    TaskDef::records("longbench", table_kind, build_result)
        .with_directions({{"scores/*", Direction::Higher}})  // every task's score, and LongBench-E's buckets
        .with_path_keys({"data_dir", "pred_dir", "config_dir"})
        .with_information_flags({"--config"})  // the prompt files count by their digests
        .with_paper_settings("longbench/longbench_table.json")
        .with_baselines({{"e2e-longbench.json",
                          "longbench/run.json",
                          {"longbench", "run", "--model", "{trained}", "--data", "tests/fixtures/longbench/data",
                           "--tasks", "qasper,multifieldqa_en,gov_report,trec,samsum,lcc,repobench-p", "--limit", "2",
                           "--max-length", "700", "--max-new-tokens", "24", "--out", "{out}/longbench"}}})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::longbench
