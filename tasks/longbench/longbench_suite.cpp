// `foxeval suite`'s longbench entry: the settings of `foxeval longbench run` (flags without "--");
// its output is a folder, as the command's --out (run.json inside). The suite's cap is --limit.
#include <algorithm>

#include "tasks/longbench/longbench_run.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

const suite::TaskRegistrar longbench_suite("longbench", [](suite::TaskSettings& t, int64_t cap) {
  longbench::RunSettings s;
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
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks, s.stop_after = c.stop_after;
    longbench::run_longbench(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
