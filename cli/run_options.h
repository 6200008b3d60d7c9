// The options every model-running command shares, declared here once: --device, --dtype and
// --log-pruning-tolerance (add_run_options); the shards of a task run and --resume
// (add_shard_options); and what happens after parsing: "auto" resolved against this machine and
// the launcher's rank, the one-line announcement armed (resolve_run), and a task run's ending
// (run_task: a late signal ignored once the result is written, exit 3 when interrupted).
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "models/model.h"
#include "tasks/run/distributed.h"
#include "tasks/run/run_ranks.h"

namespace foxeval {

// --device (default auto), --dtype (default auto), --threads (default: the cores this process may
// use), --log-pruning-tolerance (default: the checkpoint's).
// Sets run.device and run.dtype to "auto" (their default on the command line). `pruning`: also
// --log-pruning-tolerance (commands that may run a FoX model).
void add_run_options(CLI::App* cmd, RunOptions& run, bool pruning = true);

struct ShardArgs {
  int64_t num_shards = -1, shard_index = -1;  // -1: not given (the launcher's, else one shard)
  bool resume = false;
};

// --num-shards, --shard-index and --resume (`what`: what is split, e.g. "documents"; `saved`:
// what --resume continues from, e.g. "journal (OUT.journal.jsonl)").
void add_shard_options(CLI::App* cmd, ShardArgs& shards, const std::string& what, const std::string& saved);

// After parsing, before any work: resolves --device/--dtype "auto" (and a launcher's local rank)
// into run, sets the CPU thread pools (--threads), and arms the announcement load_model prints: with the options given to `cmd` that
// change numbers (every option given except paths, shards and resume/stop controls).
void resolve_run(const CLI::App* cmd, RunOptions& run, int64_t local_rank = -1);

// For sharded task commands: plan_shards (tasks/run/distributed.h) for `task`, then resolve_run with
// the plan's local rank.
ShardPlan resolve_task_run(const CLI::App* cmd, const std::string& task, const ShardArgs& shards, RunOptions& run);

// resolve_task_run into a task's settings: its run options, the plan's shard, ranks and --resume
// (every sharded task's settings carry run, num_shards, shard_index, ranks and resume).
template <typename TaskSettings>
void resolve_task_settings(const CLI::App* cmd, const std::string& task, const ShardArgs& shards, TaskSettings& s) {
  const ShardPlan plan = resolve_task_run(cmd, task, shards, s.run);
  s.num_shards = plan.num_shards;
  s.shard_index = plan.shard_index;
  s.ranks = plan.ranks;
  s.resume = shards.resume;
}

// Runs a task: `body` computes and writes the result and returns; then SIGINT/SIGTERM are ignored
// (a written result must not turn into a killed run) and `report` prints, once: on rank 0 of a
// distributed run (`ranks`, the task settings' plan_shards session; null: one process). A
// RunInterrupted (the journal or state is saved) prints "foxeval NAME: why" and exits 3, --resume
// continues.
void run_task(const std::string& name, const RunRanks& ranks, const std::function<void()>& body,
              const std::function<void()>& report = {});

}  // namespace foxeval
