// `foxeval loss`.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "tasks/run/distributed.h"
#include "tasks/run/launcher_env.h"
#include "data/json_file.h"
#include "tasks/loss/loss.h"
#include "tasks/loss/loss_table.h"
#include "tasks/run/runner.h"
#include "tasks/loss/loss_summary.h"

namespace foxeval {
namespace {

CommandRegistrar loss_command([](CLI::App& root) {
  auto s = std::make_shared<LossSettings>();
  auto shards = std::make_shared<ShardArgs>();
  CLI::App* cmd = root.add_subcommand("loss", "Per-position held-out loss (LongCrawl64 protocol)");
  cmd->add_option("--model", s->model_dir, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  auto* data = cmd->add_option("--data", s->data_path, "token rows: a 2-D .npy (uint16/int32/int64) or a zarr v2 array");
  auto* text = cmd->add_option("--text", s->text_source,
                               "documents to tokenize: a .jsonl/.parquet/.arrow/.txt file or folder, a save_to_disk folder, "
                               "or hf:ORG/NAME[:CONFIG]:SPLIT from the local Hugging Face caches");
  data->excludes(text);
  cmd->add_option("--text-field", s->text_field,
                  "the documents' text field, a dotted path (default: the corpus' own, see README; else 'text')")
      ->needs(text);
  cmd->add_option("--text-split", s->text_split, "the split of a save_to_disk DatasetDict given to --text")->needs(text);
  cmd->add_flag("--pack", s->pack, "concatenate the documents with --separator-id between them and cut windows "
                "(default: each document's first --seq-len tokens; shorter documents skipped)")->needs(text);
  cmd->add_option("--separator-id", s->separator_id, "the token after each document with --pack (default 50256)")
      ->check(int_range(0))->needs(text);
  cmd->add_option("-o,--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  cmd->add_option("--seq-len", s->seq_len, "evaluation length (default: the row length; longer rows split; needed with --text)")
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
  cmd->callback([cmd, s, shards, data, text] {
    if (data->count() + text->count() == 0) throw CLI::RequiredError("--data or --text");
    // torchrun/srun/mpirun with a store address and no --num-shards: one shared run (tasks/run/distributed.h).
    resolve_task_settings(cmd, "loss", *shards, *s);
    nlohmann::json result;
    run_task(
        "loss", s->ranks,
        [&] {
          result = run_loss(*s);
        },
        [&] { loss::print_loss_summary(result); });
  });
});

}  // namespace
}  // namespace foxeval
