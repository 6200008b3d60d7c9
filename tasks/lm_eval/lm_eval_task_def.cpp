// `lm-eval`'s definition (tasks/task_def.h): what table, check, merge, identity and CI know of it.
#include "tasks/lm_eval/lm_eval_table.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/task_def.h"

namespace foxeval::lm_eval {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "lm-eval";
  d.tables = table_kind;
  d.build = build_lm_eval_result;
  // lm-eval 0.4.4's higher_is_better of each metric.
  d.directions = {{"*perplexity*", Direction::Lower}, {"*bits_per_byte*", Direction::Lower},
                  {"*acc,*", Direction::Higher},      {"*acc_norm,*", Direction::Higher},
                  {"*/acc", Direction::Higher},       {"*/acc_norm", Direction::Higher}};
  // CPU float32 kernels may round differently on another CPU's vector width.
  d.tolerances = {{"*perplexity*", 0, 1e-5}, {"*bits_per_byte*", 0, 1e-5}};
  d.path_keys = {"data_dir"};
  d.information_flags = {"--log-samples"};
  d.paper_settings = "lm_eval/lm_eval_table.json";
  d.baselines = {{"e2e-lm_eval.json",
                  "lm_eval.json",
                  {"lm-eval", "run", "--model", "{trained}", "--tasks",
                   "wikitext,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,boolq,sciq,copa,openbookqa",
                   "--data", "tests/fixtures/lm_eval/data", "--limit", "3", "--max-length", "256", "--out",
                   "{out}/lm_eval.json"}}};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::lm_eval
