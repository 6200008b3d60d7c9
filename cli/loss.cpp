// `foxeval loss` and `foxeval merge`.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/distributed.h"
#include "tasks/launcher_env.h"
#include "data/json_file.h"
#include "tasks/loss.h"
#include "tasks/runner.h"

namespace foxeval {
namespace {

void print_summary(const nlohmann::json& r) {
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it.key().rfind("val/loss_avg_len_", 0) == 0 || it.key().rfind("val/perplexity_len_", 0) == 0)
      std::printf("%s\t%.6f\n", it.key().c_str(), it.value().get<double>());
  if (r.contains("peak_gpu_memory_bytes"))
    std::printf("peak GPU memory\t%.2f GiB\n", r["peak_gpu_memory_bytes"].get<double>() / (1 << 30));
  if (r.contains("data_wait_s")) std::printf("waiting for data\t%.3f s\n", r["data_wait_s"].get<double>());
  if (r.contains("seconds_per_document"))
    std::printf("s/document\t%.4f\n", r["seconds_per_document"].get<double>());
  if (r.contains("tokens_per_s"))
    std::printf("documents\t%lld\ntokens/s\t%.1f\n", static_cast<long long>(r["documents"].get<int64_t>()),
                r["tokens_per_s"].get<double>());
}

CommandRegistrar loss_command([](CLI::App& root) {
  auto s = std::make_shared<LossSettings>();
  auto shards = std::make_shared<std::pair<int64_t, int64_t>>(-1, -1);
  CLI::App* cmd = root.add_subcommand("loss", "Per-position held-out loss (LongCrawl64 protocol)");
  cmd->add_option("--model", s->model_dir, "Hugging Face checkpoint directory")->required();
  cmd->add_option("--data", s->data_path, "token rows: a 2-D .npy (uint16/int32/int64) or a zarr v2 array")->required();
  cmd->add_option("--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  cmd->add_option("--seq-len", s->seq_len, "evaluation length (default: the row length; longer rows split)")
      ->check(int_range(1, kMaxContextTokens));
  cmd->add_option("--tokens", s->max_tokens, "evaluate the first N tokens (default 2^31, the paper's)")
      ->check(int_range(1));
  cmd->add_option("--bos-id", s->bos_id, "token prepended to each window (default 50256)")
      ->check(int_range(0));
  cmd->add_option("--batch-size", s->batch_size, "windows per forward pass")->check(int_range(1, 1 << 20));
  cmd->add_option("--device", s->run.device, "cpu or cuda[:N]");
  add_pruning_option(cmd, s->run);
  cmd->add_option("--dtype", s->run.dtype, "float32 or bfloat16 (the official bf16 autocast numerics)")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  cmd->add_option("--num-shards", shards->first, "split documents over N shards (default: from the launcher)")
      ->check(int_range(1, 1 << 20));
  cmd->add_option("--shard-index", shards->second, "this shard (default: from the launcher)")
      ->check(int_range(0, 1 << 20));
  cmd->add_flag("--resume", s->resume, "continue an interrupted run from its saved state");
  cmd->add_option("--save-every", s->save_every_seconds, "seconds between state saves")
      ->check(positive_number());
  cmd->add_option("--stop-after", s->stop_after_windows, "save the state and stop after N windows (resume later)")
      ->check(int_range(1));
  cmd->callback([s, shards] {
    // torchrun/srun/mpirun with a store address and no --num-shards: one shared run (tasks/distributed.h).
    const ShardPlan plan = plan_shards("loss", shards->first, shards->second);
    s->num_shards = plan.num_shards;
    s->shard_index = plan.shard_index;
    s->run.device = device_for_local_rank(s->run.device, plan.local_rank);
    try {
      const nlohmann::json result = run_loss(*s);
      // The result is written: a signal from now on (printing, shutting down) must not turn a
      // finished run into a killed one (exit 143).
      std::signal(SIGINT, SIG_IGN);
      std::signal(SIGTERM, SIG_IGN);
      print_summary(result);
    } catch (const LossInterrupted& e) {
      std::fprintf(stderr, "foxeval loss: %s\n", e.what());
      std::exit(3);  // distinct from errors: the state is saved, --resume continues
    }
  });
});

CommandRegistrar merge_command([](CLI::App& root) {
  auto out = std::make_shared<std::string>();
  auto parts = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("merge", "Combine shard parts (loss, niah, longbench, lm-eval) into one result (exactly)");
  cmd->add_option("--out", *out, "merged result JSON")->required();
  cmd->add_option("parts", *parts, "shard part files")->required();
  cmd->callback([out, parts] {
    // Loss parts carry exact sums; every other task's parts carry records (tasks/runner.h).
    if (read_json(parts->front()).value("kind", "") == "foxeval-loss-part") {
      print_summary(merge_loss_parts(*parts, *out));
    } else {
      const nlohmann::json r = merge_task_parts(*parts, *out);
      std::printf("merged %zu parts of %s into %s\n", parts->size(), r["header"]["task"].get<std::string>().c_str(),
                  out->c_str());
    }
  });
});

}  // namespace
}  // namespace foxeval
