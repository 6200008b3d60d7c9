// `foxeval babilong requests | run`: BABILong as lm-evaluation-harness 0.4.13's babilong tasks.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/command_output.h"
#include "cli/generation_options.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/json_file.h"
#include "data/python/json_dumps.h"
#include "tasks/babilong/babilong_plot.h"
#include "tasks/babilong/babilong_run.h"
#include "tasks/babilong/babilong_table.h"
#include "tasks/run/distributed.h"
#include "tasks/run/runner.h"
#include "tasks/babilong/babilong_summary.h"

namespace foxeval {
namespace {

void add_data_options(CLI::App* cmd, std::string& data, std::vector<std::string>& tasks, std::vector<std::string>& lengths,
                      int64_t& limit) {
  cmd->add_option("--data", data,
                  "hf (default): RMT-team/babilong-1k-samples in the local Hugging Face caches; or a folder "
                  "DIR/{length}/{task}.jsonl|.parquet|{task}-*.parquet");
  cmd->add_option("--tasks", tasks, "comma-separated tasks qa1..qa20 (default: qa1,qa2,qa3,qa4,qa5)")->delimiter(',');
  cmd->add_option("--lengths", lengths, "comma-separated lengths 0k,1k,..,128k (default: every length present)")->delimiter(',');
  cmd->add_option("--limit", limit, "first N documents of each task and length (default: all)")->check(int_range(1));
}

CommandRegistrar plot_babilong_command([](CLI::App& root) {
  add_score_plot_command(root, "babilong", "BABILong accuracy against context length, one line per result, as an SVG",
                         "result JSON files written by `foxeval babilong run`",
                         "one task (qa1..qa20) instead of the mean over the tasks run", babilong::plot_babilong_files);
});

CommandRegistrar babilong_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "babilong", "BABILong (lm-eval 0.4.13's babilong tasks): requests, run");

  // ---- requests ----
  {
    auto data = std::make_shared<std::string>("hf");
    auto tasks = std::make_shared<std::vector<std::string>>();
    auto lengths = std::make_shared<std::vector<std::string>>();
    auto limit = std::make_shared<int64_t>(0);
    auto out = std::make_shared<std::string>();
    CLI::App* cmd = group->add_subcommand("requests", "Write lm-eval's generate_until requests (context, gen_kwargs), no model");
    add_data_options(cmd, *data, *tasks, *lengths, *limit);
    cmd->add_option("-o,--out", *out, "JSON lines: {length, task, doc_id, context, gen_kwargs}")->required();
    cmd->callback([=] {
      const std::vector<babilong::SplitData> splits = babilong::select_splits(*data, *tasks, *lengths, *limit);
      std::string text;
      size_t n = 0;
      for (const babilong::SplitData& sp : splits)
        for (size_t d = 0; d < sp.docs.size(); ++d, ++n) text += python_json_dumps(babilong::request_json(sp, d)) + "\n";
      write_text_atomic(*out, text);
      std::printf("%zu requests of %zu task x length splits written to %s\n", n, splits.size(), out->c_str());
    });
  }

  // ---- run ----
  {
    auto s = std::make_shared<babilong::RunSettings>();
    auto shards = std::make_shared<ShardArgs>();
    CLI::App* cmd = group->add_subcommand("run", "Generate and score every task at every length (resumable, shardable)");
    cmd->add_option("--model", s->model_dir, "Hugging Face checkpoint directory or repo id")->required();
    add_data_options(cmd, s->data, s->tasks, s->lengths, s->limit);
    cmd->add_option("-o,--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
    cmd->add_option("--max-length", s->max_length,
                    "keep the last N - 16 prompt tokens, as lm-eval's HFLM with max_length=N (default: no truncation)")
        ->check(int_range(17, kMaxContextTokens));
    add_run_options(cmd, s->run);
    add_generation_options(cmd, s->generation);
    add_shard_options(cmd, *shards, "documents", "journal (OUT.journal.jsonl)");
    cmd->add_option("--stop-after", s->stop_after, "stop after N documents as if interrupted (exit 3; --resume continues)")
        ->check(int_range(1));
    cmd->callback([cmd, s, shards] {
      resolve_task_settings(cmd, "babilong", *shards, *s);
      nlohmann::json result;
      run_task("babilong run", s->ranks, [&] { result = babilong::run_babilong(*s); }, [&] {
        if (!report_shard_part(s->shard_index, s->num_shards)) babilong::print_babilong_summary(result);
      });
    });
  }
});

}  // namespace
}  // namespace foxeval
