// `foxeval loss`.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "tasks/distributed.h"
#include "tasks/launcher_env.h"
#include "data/json_file.h"
#include "tasks/loss/loss.h"
#include "tasks/loss/loss_table.h"
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
  // "documents" counts windows; the rows they come from, and what of the data was not evaluated.
  if (r.contains("rows"))
    std::printf("windows\t%lld\nrows\t%lld\ntokens dropped\t%lld\nrows not read\t%lld\n",
                static_cast<long long>(r["windows"].get<int64_t>()), static_cast<long long>(r["rows"].get<int64_t>()),
                static_cast<long long>(r["tokens_dropped"].get<int64_t>()),
                static_cast<long long>(r["rows_unread"].get<int64_t>()));
}

// Its tables and report sections (`foxeval table`, `foxeval report`).
const results::KindRegistrar loss_tables(loss::table_kind);

CommandRegistrar loss_command([](CLI::App& root) {
  auto s = std::make_shared<LossSettings>();
  auto shards = std::make_shared<ShardArgs>();
  CLI::App* cmd = root.add_subcommand("loss", "Per-position held-out loss (LongCrawl64 protocol)");
  cmd->add_option("--model", s->model_dir, "Hugging Face checkpoint directory")->required();
  cmd->add_option("--data", s->data_path, "token rows: a 2-D .npy (uint16/int32/int64) or a zarr v2 array")->required();
  cmd->add_option("-o,--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  cmd->add_option("--seq-len", s->seq_len, "evaluation length (default: the row length; longer rows split)")
      ->check(int_range(1, kMaxContextTokens));
  cmd->add_option("--tokens", s->max_tokens, "evaluate the first N tokens (default 2^31, the paper's)")
      ->check(int_range(1));
  cmd->add_option("--bos-id", s->bos_id, "token prepended to each window (default 50256)")
      ->check(int_range(0));
  cmd->add_option("--batch-size", s->batch_size, "windows per forward pass")->check(int_range(1, 1 << 20));
  add_run_options(cmd, s->run);
  add_shard_options(cmd, *shards, "documents", "saved state (OUT.state.json)");
  cmd->add_option("--save-every", s->save_every_seconds, "seconds between state saves")
      ->check(positive_number());
  cmd->add_option("--stop-after", s->stop_after_windows, "save the state and stop after N windows (resume later; default: none)")
      ->check(int_range(1));
  cmd->callback([cmd, s, shards] {
    // torchrun/srun/mpirun with a store address and no --num-shards: one shared run (tasks/distributed.h).
    resolve_task_settings(cmd, "loss", *shards, *s);
    nlohmann::json result;
    run_task(
        "loss",
        [&] {
          result = run_loss(*s);
        },
        [&] { print_summary(result); });
  });
});

}  // namespace
}  // namespace foxeval
