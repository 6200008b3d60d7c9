#include "cli/run_options.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "cli/validators.h"
#include "models/run_options.h"
#include "tasks/runner.h"

namespace foxeval {

void add_run_options(CLI::App* cmd, RunOptions& run, bool pruning) {
  run.device = "auto";
  run.dtype = "auto";
  cmd->add_option("--device", run.device,
                  "auto, cpu, cuda or cuda:N (default: auto = this process's GPU (the launcher's local rank) when "
                  "CUDA is present, else the CPU)");
  cmd->add_option("--dtype", run.dtype,
                  "auto, float32 or bfloat16 = the official evaluation's bf16 autocast numerics (default: auto = "
                  "bfloat16 on a GPU, float32 on the CPU)")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16"}));
  if (!pruning) return;
  cmd->add_option("--log-pruning-tolerance", run.log_pruning_tolerance,
                  "FoX adaptive computation pruning: natural log of the softmax mass it may drop (e.g. -10), or "
                  "none (default: the checkpoint's log_pruning_tolerance, as the official model)");
}

void add_shard_options(CLI::App* cmd, ShardArgs& shards, const std::string& what, const std::string& saved) {
  cmd->add_option("--num-shards", shards.num_shards,
                  fmt::format("split the {} over N shards (default: from the launcher, else 1)", what))
      ->check(int_range(1, 1 << 20));
  cmd->add_option("--shard-index", shards.shard_index, "this shard (default: from the launcher, else 0)")
      ->check(int_range(0, 1 << 20));
  cmd->add_flag("--resume", shards.resume, fmt::format("continue an interrupted run from its {} (default: off)", saved));
}

void resolve_run(const CLI::App* cmd, RunOptions& run, int64_t local_rank) {
  const ResolvedDevice r = resolve_device(run.device, run.dtype, local_rank);
  run.device = r.device;
  run.dtype = r.dtype;
  run.chosen = r.chosen;
  run.announce = true;
  // Where things are, how the run is split or stopped, and how it prints: not settings of the numbers.
  static const std::set<std::string> not_numbers = {
      "--model",  "--data",        "--out",       "--haystack",   "--pred-dir",  "--log-samples", "--requests",
      "--prompt", "--prompt-ids",  "--prompt-file", "--config",   "--resume",    "--stop-after",  "--save-every",
      "--num-shards", "--shard-index", "--json",  "--device",     "--dtype",     "--log-pruning-tolerance", "--help"};
  std::string settings;
  for (const CLI::Option* o : cmd->get_options()) {
    if (o->count() == 0 || o->get_lnames().empty()) continue;
    const std::string name = "--" + o->get_lnames().front();
    if (not_numbers.count(name)) continue;
    std::string value;
    if (o->get_expected_min() > 0)
      for (const std::string& v : o->results()) value += (value.empty() ? "" : ",") + v;
    settings += (settings.empty() ? "" : " ") + (value.empty() ? name : name + " " + value);
  }
  run.settings = settings.empty() ? "" : "settings " + settings;
}

ShardPlan resolve_task_run(const CLI::App* cmd, const std::string& task, const ShardArgs& shards, RunOptions& run) {
  const ShardPlan plan = plan_shards(task, shards.num_shards, shards.shard_index);
  resolve_run(cmd, run, plan.local_rank);
  return plan;
}

void run_task(const std::string& name, const std::function<void()>& body, const std::function<void()>& report) {
  try {
    body();
  } catch (const RunInterrupted& e) {
    std::fprintf(stderr, "foxeval %s: %s\n", name.c_str(), e.what());
    std::exit(3);  // distinct from errors: what is finished is saved, --resume continues
  }
  std::signal(SIGINT, SIG_IGN);  // the result is written: a late signal must not look like a kill (exit 143)
  std::signal(SIGTERM, SIG_IGN);
  if (report) report();
}

}  // namespace foxeval
