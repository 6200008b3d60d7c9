// The runner's settings of a task that runs a model, from the task's settings (every such task's
// carries resume, num_shards, shard_index and ranks, set by cli's resolve_task_settings or the
// suite): each field by name, and header.pruning from the model's counts.
#pragma once
#include <string>
#include <utility>

#include "models/model.h"
#include "tasks/run/pruning_header.h"
#include "tasks/run/runner.h"

namespace foxeval {

template <typename TaskSettings>
RunnerSettings task_runner_settings(const TaskSettings& s, std::string out_path, const CausalLM* model) {
  RunnerSettings rs;
  rs.out_path = std::move(out_path);
  rs.resume = s.resume;
  rs.num_shards = s.num_shards;
  rs.shard_index = s.shard_index;
  rs.ranks = s.ranks;
  rs.stats = {pruning_stats(model)};  // header.pruning
  return rs;
}

}  // namespace foxeval
