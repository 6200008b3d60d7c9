// `niah`'s definition (tasks/task_def.h): what table, check, merge, identity and CI know of it.
#include "tasks/niah/niah_score.h"
#include "tasks/niah/niah_table.h"
#include "tasks/task_def.h"

namespace foxeval::niah {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "niah";
  d.tables = table_kind;
  d.build = build_result;
  // The offline 1-10 score and the judge's, per cell and as means; the needle's recall.
  d.directions = {{"mean", Direction::Higher},
                  {"judge/mean", Direction::Higher},
                  {"mean_by_*/mean", Direction::Higher},
                  {"judge/mean_by_*/mean", Direction::Higher},
                  {"cells/*/score", Direction::Higher},
                  {"cells/*/judge_score", Direction::Higher},
                  {"cells/*/answer_recall", Direction::Higher}};
  d.path_keys = {"haystack", "haystack_dir", "pred_dir"};
  d.information_flags = {"--haystack", "--pred-dir"};
  d.paper_settings = "niah/niah_table.json";
  d.baselines = {{"e2e-niah.json",
                  "niah.json",
                  {"niah", "run", "--model", "{trained}", "--haystack", "{shared}/data/PaulGrahamEssays", "--mode",
                   "standard", "--lengths", "400,900", "--depths", "0,50,100", "--max-new-tokens", "24", "--out",
                   "{out}/niah.json"}}};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::niah
