// `loss`'s definition (tasks/task_def.h): what table, check, merge, identity and CI know of it.
#include "tasks/loss/loss.h"
#include "tasks/loss/loss_table.h"
#include "tasks/task_def.h"

namespace foxeval::loss {
namespace {

TaskDef definition() {
  TaskDef d;
  d.name = "loss";
  d.tables = table_kind;
  d.reducer = loss_reducer();  // exact fixed-point sums: shards and resume give one run's bits
  d.directions = {{"*loss*", Direction::Lower}, {"*perplexity*", Direction::Lower}};
  // CPU float32 kernels may round differently on another CPU's vector width.
  d.tolerances = {{"val/loss*", 1e-4, 0}, {"*perplexity*", 0, 1e-5}};
  d.path_keys = {"data_dir", "data_path"};
  d.paper_settings = "loss/loss_table.json";
  d.baselines = {{"default-loss.json",
                  "loss.json",
                  {"loss", "--model", "tests/fixtures/official/fox_pro", "--data", "data/default/tokens.npy",
                   "--bos-id", "0", "--out", "{out}/loss.json"}}};
  return d;
}

}  // namespace

const TaskRegistrar registered(definition);

}  // namespace foxeval::loss
