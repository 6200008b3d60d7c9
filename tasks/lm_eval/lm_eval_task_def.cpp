// `lm-eval`'s definition (tasks/task_def.h): what table, check, merge, identity, CI and suite know of it.
#include <algorithm>

#include "tasks/lm_eval/lm_eval_table.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/task_def.h"

namespace foxeval::lm_eval {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval lm-eval run` (flags without "--"; data: a
// folder or hf). The suite's cap is --limit.
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  LmEvalSettings s;
  s.tasks = t.joined("tasks");
  if (s.tasks.empty()) t.fail("tasks", "is required (lm-eval task names)");
  s.data_dir = t.path_or("data", "hf", s.data_dir);
  s.limit = t.integer("limit", -1, 1);
  if (cap > 0) s.limit = s.limit < 0 ? cap : std::min(s.limit, cap);
  s.batch_size = t.integer("batch-size", s.batch_size, 1, 1 << 20);
  s.max_batch_tokens = t.integer("max-batch-tokens", s.max_batch_tokens, 1);
  s.max_length = t.integer("max-length", s.max_length, 2, int64_t(1) << 20);
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    c.fill(s);
    s.stop_after_docs = c.stop_after;
    run_lm_eval(s);
  });
}

}  // namespace

const TaskRegistrar registered(
    TaskDef::records("lm-eval", table_kind, build_lm_eval_result)
        // lm-eval 0.4.4's higher_is_better of each metric.
        .with_directions({{"*perplexity*", Direction::Lower}, {"*bits_per_byte*", Direction::Lower},
                          {"*acc,*", Direction::Higher},      {"*acc_norm,*", Direction::Higher},
                          {"*/acc", Direction::Higher},       {"*/acc_norm", Direction::Higher}})
        // CPU float32 kernels may round differently on another CPU's vector width.
        .with_tolerances({{"*perplexity*", 0, 1e-5}, {"*bits_per_byte*", 0, 1e-5}})
        .with_path_keys({"data_dir"})
        .with_information_flags({"--log-samples"})
        .with_paper_settings("lm_eval/lm_eval_table.json")
        .with_baselines({{"e2e-lm_eval.json",
                          "lm_eval.json",
                          {"lm-eval", "run", "--model", "{trained}", "--tasks",
                           "wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa",
                           "--data", "tests/fixtures/lm_eval/data", "--limit", "3", "--max-length", "256", "--out",
                           "{out}/lm_eval.json"}}})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::lm_eval
