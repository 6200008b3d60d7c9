// `niah`'s definition (tasks/task_def.h): what table, check, merge, identity, CI and suite know of it.
#include "data/errors.h"
#include "tasks/niah/niah_score.h"
#include "tasks/niah/niah_table.h"
#include "tasks/niah/niah_task.h"
#include "tasks/task_def.h"

namespace foxeval::niah {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval niah run` (flags without "--"). The suite's
// cap keeps the grid's first `cap` context lengths (every depth of each).
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  RunSettings s;
  s.haystack_dir = t.required_path("haystack");
  s.spec.mode = t.text("mode", s.spec.mode);
  s.spec.lengths = t.integers("lengths");
  s.spec.depths = t.integers("depths");
  s.spec.needle = t.text("needle", "");
  s.spec.question = t.text("question", "");
  s.spec.answer = t.text("answer", "");
  s.max_new_tokens = t.integer("max-new-tokens", s.max_new_tokens, 1, int64_t(1) << 20);
  s.generation.max_batch = t.integer("batch-size", s.generation.max_batch, 1, 1 << 20);
  try {
    // A bad mode or grid stops the suite before any model loads.
    const std::vector<int64_t> grid = resolve_spec(s.spec).mode.lengths;
    if (cap > 0 && static_cast<int64_t>(grid.size()) > cap) s.spec.lengths.assign(grid.begin(), grid.begin() + cap);
  } catch (const Error& e) {
    t.fail("", e.what());
  }
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    c.fill(s);
    s.stop_after = c.stop_after;
    run_sweep(s);
  });
}

}  // namespace

const TaskRegistrar registered(
    TaskDef::records("niah", table_kind, build_result)
        // The offline 1-10 score and the judge's, per cell and as means; the needle's recall.
        .with_directions({{"mean", Direction::Higher},
                          {"judge/mean", Direction::Higher},
                          {"mean_by_*/mean", Direction::Higher},
                          {"judge/mean_by_*/mean", Direction::Higher},
                          {"cells/*/score", Direction::Higher},
                          {"cells/*/judge_score", Direction::Higher},
                          {"cells/*/answer_recall", Direction::Higher}})
        .with_path_keys({"haystack", "haystack_dir", "pred_dir"})
        .with_information_flags({"--haystack", "--pred-dir"})
        .with_paper_settings("niah/niah_table.json")
        .with_baselines({{"e2e-niah.json",
                          "niah.json",
                          {"niah", "run", "--model", "{trained}", "--haystack", "{shared}/data/PaulGrahamEssays",
                           "--mode", "standard", "--lengths", "400,900", "--depths", "0,50,100", "--max-new-tokens",
                           "24", "--out", "{out}/niah.json"}}})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::niah
