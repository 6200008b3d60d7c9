#include "cli/run_options.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "cli/validators.h"
#include "data/cpu_cores.h"
#include "models/cpu_threads.h"
#include "models/run_options.h"
#include "tasks/run/runner.h"
#include "tasks/task_def.h"

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
  // No variable behind it: resolve_run reads it from `cmd` (the thread pools are the process's).
  static const std::string threads_help =
      "CPU threads for the matrix products (MKL in its strict reproducible mode: every count gives the same bits; "
      "every other op runs on one) (default: $OMP_NUM_THREADS when set, else the cores this process may use: its "
      "CPU affinity mask and cgroup CPU quota)";
  cmd->add_option("--threads", threads_help)->type_name("INT")->check(int_range(1, 4096));
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

namespace {

// Sets the CPU threads (models/cpu_threads.h: MKL's GEMMs use them, every other op one) and
// says how the count was chosen ("" when --threads gave it). MKL keeps the count per thread:
// set here on the main thread, where every task runs its model. OMP_NUM_THREADS, when set, wins
// over the cores (the user's or the launcher's choice: --nproc-per-node sets usable cores / N).
std::string apply_threads(const CLI::App* cmd) {
  const CLI::Option* given = cmd->get_option_no_throw("--threads");
  int64_t n = 0;
  std::string why;
  if (given && given->count() > 0) {
    n = given->as<int64_t>();
  } else if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp && *omp && std::atoll(omp) > 0) {
    n = std::atoll(omp);
    why = fmt::format("threads: OMP_NUM_THREADS={}", omp);
  } else {
    const UsableCores u = usable_cores();
    n = u.cores;
    why = "threads: the cores this process may use (" + u.describe() + ")";
  }
  const int64_t in_effect = set_cpu_threads(n);
  if (in_effect != n)
    why += fmt::format("{}threads: {} asked, 1 used (this LibTorch has no MKL, whose GEMMs alone can use more "
                       "threads without changing bits)", why.empty() ? "" : "; ", n);
  return why;
}

}  // namespace

void resolve_run(const CLI::App* cmd, RunOptions& run, int64_t local_rank) {
  const ResolvedDevice r = resolve_device(run.device, run.dtype, local_rank);
  run.device = r.device;
  run.dtype = r.dtype;
  run.chosen = r.chosen;
  const std::string threads = apply_threads(cmd);
  if (!threads.empty()) run.chosen += (run.chosen.empty() ? "" : "; ") + threads;
  run.announce = true;
  // Where things are, how the run is split or stopped, and how it prints: not settings of the
  // numbers. The run machinery's flags and those of the commands that are not tasks (generate,
  // score) here; each task declares its own (TaskDef::information_flags, tasks/task_def.h).
  static const std::set<std::string> not_numbers = [] {
    std::set<std::string> s = {"--model",      "--data",        "--out",    "--resume",      "--stop-after",
                               "--save-every", "--num-shards",  "--shard-index", "--device", "--dtype",
                               "--log-pruning-tolerance",       "--help",   "--threads",  // announced beside the device
                               "--requests",   "--prompt",      "--prompt-ids", "--prompt-file", "--json"};
    for (const std::string& f : task_information_flags()) s.insert(f);
    return s;
  }();
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

void run_task(const std::string& name, const RunRanks& ranks, const std::function<void()>& body,
              const std::function<void()>& report) {
  try {
    body();
  } catch (const RunInterrupted& e) {
    std::fprintf(stderr, "foxeval %s: %s\n", name.c_str(), e.what());
    std::exit(3);  // distinct from errors: what is finished is saved, --resume continues
  }
  std::signal(SIGINT, SIG_IGN);  // the result is written: a late signal must not look like a kill (exit 143)
  std::signal(SIGTERM, SIG_IGN);
  // One summary for one result: in a distributed run rank 0's (every rank holds the same result).
  if (report && (!ranks || ranks->rank() == 0)) report();
}

}  // namespace foxeval
