// `foxeval suite`'s niah entry: the settings of `foxeval niah run` (flags without "--").
#include "data/errors.h"
#include "tasks/niah/niah_task.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

// The suite's cap keeps the grid's first `cap` context lengths (every depth of each).
const suite::TaskRegistrar niah_suite("niah", [](suite::TaskSettings& t, int64_t cap) {
  niah::RunSettings s;
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
    const std::vector<int64_t> grid = niah::resolve_spec(s.spec).mode.lengths;
    if (cap > 0 && static_cast<int64_t>(grid.size()) > cap) s.spec.lengths.assign(grid.begin(), grid.begin() + cap);
  } catch (const Error& e) {
    t.fail("", e.what());
  }
  suite::PreparedTask p;
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks, s.stop_after = c.stop_after;
    niah::run_sweep(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
