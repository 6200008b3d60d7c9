// `foxeval suite`'s babilong entry: the settings of `foxeval babilong run` (flags without "--";
// data: a folder or hf). The suite's cap is --limit.
#include <algorithm>

#include "tasks/babilong/babilong_run.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

const suite::TaskRegistrar babilong_suite("babilong", [](suite::TaskSettings& t, int64_t cap) {
  babilong::RunSettings s;
  s.data = t.path_or("data", "hf", s.data);
  s.tasks = t.texts("tasks");
  s.lengths = t.texts("lengths");
  s.limit = t.integer("limit", 0, 1);
  if (cap > 0) s.limit = s.limit == 0 ? cap : std::min(s.limit, cap);
  s.max_length = t.integer("max-length", 0, 17, int64_t(1) << 20);
  s.generation.max_batch = t.integer("batch-size", s.generation.max_batch, 1, 1 << 20);
  suite::PreparedTask p;
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks;
    s.stop_after = c.stop_after > 0 ? c.stop_after : -1;
    babilong::run_babilong(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
