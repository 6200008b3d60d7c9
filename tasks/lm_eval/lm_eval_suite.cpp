// `foxeval suite`'s lm-eval entry: the settings of `foxeval lm-eval run` (flags without "--";
// data: a folder or hf). The suite's cap is --limit.
#include <algorithm>

#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

const suite::TaskRegistrar lm_eval_suite("lm-eval", [](suite::TaskSettings& t, int64_t cap) {
  lm_eval::LmEvalSettings s;
  s.tasks = t.joined("tasks");
  if (s.tasks.empty()) t.fail("tasks", "is required (lm-eval task names)");
  s.data_dir = t.path_or("data", "hf", s.data_dir);
  s.limit = t.integer("limit", -1, 1);
  if (cap > 0) s.limit = s.limit < 0 ? cap : std::min(s.limit, cap);
  s.batch_size = t.integer("batch-size", s.batch_size, 1, 1 << 20);
  s.max_batch_tokens = t.integer("max-batch-tokens", s.max_batch_tokens, 1);
  s.max_length = t.integer("max-length", s.max_length, 2, int64_t(1) << 20);
  suite::PreparedTask p;
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks, s.stop_after_docs = c.stop_after;
    lm_eval::run_lm_eval(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
