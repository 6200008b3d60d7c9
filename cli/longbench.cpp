// `foxeval longbench prompts | run | score | export`: LongBench (and LongBench-E) as the paper's
// eval/longbench pred.py and eval.py.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.h"
#include "cli/command_output.h"
#include "cli/run_options.h"
#include "cli/generation_options.h"
#include "cli/validators.h"
#include "data/python/json_dumps.h"
#include "data/json_file.h"
#include "data/tokenizer.h"
#include "tasks/run/distributed.h"
#include "tasks/run/launcher_env.h"
#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/longbench_prompt_set.h"
#include "tasks/longbench/longbench_run.h"
#include "tasks/longbench/longbench_table.h"
#include "tasks/run/runner.h"

namespace foxeval {
namespace {

void add_prompt_options(CLI::App* cmd, longbench::PromptSettings& p) {
  cmd->add_option("--data", p.data_dir,
                  "LongBench's data/ folder ({task}.jsonl, {task}_e.jsonl with --e, or .parquet) or its released data.zip")->required();
  cmd->add_option("--tasks", p.tasks, "comma-separated tasks, or all (LongBench's 21; 13 with --e) (default: the paper's 14 English tasks; 11 with --e)");
  cmd->add_flag("--e", p.e, "LongBench-E: read {task}_e files, score by length bucket");
  cmd->add_option("--max-length", p.max_length, "prompt tokens kept (cut in the middle as pred.py; default 15500)");
  cmd->add_option("--config", p.config_dir, "folder with your own dataset2prompt.json and dataset2maxlen.json");
}

void print_scores(const nlohmann::json& scores) {
  for (auto it = scores.begin(); it != scores.end(); ++it) std::printf("%s\t%s\n", it.key().c_str(), foxeval::python_json_dumps(it.value()).c_str());
}

CommandRegistrar longbench_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "longbench", "LongBench / LongBench-E: prompts, run, score (official pred.py/eval.py)");

  // ---- prompts ----
  {
    auto p = std::make_shared<longbench::PromptSettings>();
    auto out = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    CLI::App* cmd = group->add_subcommand("prompts", "Write every record's prompt token ids (pred.py's prompt and truncation)");
    add_prompt_options(cmd, *p);
    cmd->add_option("-o,--out", *out, "JSON lines: {task, index, _id, input_ids}")->required();
    cmd->add_option("--model", *model, "take vocab.json/merges.txt from this checkpoint (default: bundled GPT-2)");
    cmd->add_option("--limit", p->limit, "first N records of each task (default: all)")->check(int_range(1));
    cmd->callback([p, out, model] {
      const Gpt2Tokenizer tok = Gpt2Tokenizer::load(*model);
      const longbench::PromptSet set = longbench::build_prompt_set(*p, tok);
      longbench::write_prompts_jsonl(set, *out);
      std::printf("%zu prompts of %zu tasks written to %s\n", set.prompts.size(), set.tasks.size(), out->c_str());
    });
  }

  // ---- run ----
  {
    auto s = std::make_shared<longbench::RunSettings>();
    auto shards = std::make_shared<ShardArgs>();
    CLI::App* cmd = group->add_subcommand("run", "Generate and score (resumable, shardable); writes the official pred files and result.json");
    cmd->add_option("--model", s->model_dir, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
    add_prompt_options(cmd, s->prompts);
    cmd->add_option("-o,--out", s->out_dir, "folder: run.json, {task}.jsonl + .done, result.json")->required();
    cmd->add_option("--limit", s->prompts.limit, "first N records of each task (default: all)")->check(int_range(1));
    add_run_options(cmd, s->run);
    cmd->add_option("--max-new-tokens", s->max_new_tokens, "cap every task's generation length (quick checks; default: dataset2maxlen)")
        ->check(int_range(1));
    add_generation_options(cmd, s->generation);
    add_shard_options(cmd, *shards, "records", "journal (OUT/run.json.journal.jsonl)");
    cmd->add_option("--stop-after", s->stop_after, "stop after N records as if interrupted (exit 3; --resume continues; default: none)")
        ->check(int_range(0));
    cmd->callback([cmd, s, shards] {
      // One shared run under torchrun/srun/mpirun, else static shards (tasks/run/distributed.h).
      resolve_task_settings(cmd, "longbench", *shards, *s);
      nlohmann::json result;
      run_task("longbench run", s->ranks, [&] { result = longbench::run_longbench(*s); }, [&] {
        if (report_shard_part(s->shard_index, s->num_shards, "`foxeval longbench export`")) return;
        print_scores(result.at("scores"));
        for (auto it = result.at("score_errors").begin(); it != result.at("score_errors").end(); ++it)
          std::fprintf(stderr, "[longbench] %s not scored: %s\n", it.key().c_str(), it.value().get<std::string>().c_str());
      });
    });
  }

  // ---- export ----
  {
    auto in = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    CLI::App* cmd = group->add_subcommand("export", "Write the official pred files and result.json from a run.json or a merged result");
    cmd->add_option("result", *in, "run.json, or the output of `foxeval merge` over shard parts")->required();
    cmd->add_option("-o,--out", *out, "folder for {task}.jsonl + .done and result.json")->required();
    cmd->callback([in, out] {
      const nlohmann::json result = read_json(*in);
      if (!result.contains("predictions") || !result.contains("scores") || !result.contains("tasks"))
        throw Error(fmt::format("{}: not a longbench result (a shard part must be merged first with `foxeval merge`)", *in));
      try {
        longbench::write_official_files(result, *out);
      } catch (const nlohmann::json::exception& err) {  // a field of the wrong type
        throw Error(fmt::format("{}: not a longbench result ({})", *in, err.what()));
      }
      print_scores(result.at("scores"));
    });
  }

  // ---- score ----
  {
    auto dir = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto e = std::make_shared<bool>(false);
    CLI::App* cmd = group->add_subcommand("score", "Score an official-layout folder of predictions as eval.py");
    cmd->add_option("pred_dir", *dir,
                    "folder of {task}.jsonl files with .done sentinels (pred.py's pred/<model>); every file that can be scored is, "
                    "the others are named and the exit code is 2")->required();
    cmd->add_flag("--e", *e, "LongBench-E buckets (0-4k, 4-8k, 8k+)");
    cmd->add_option("-o,--out", *out, "write the scores as eval.py's result.json");
    cmd->callback([dir, out, e] {
      const longbench::PredDirScores scored = longbench::score_pred_dir(*dir, *e);
      if (!out->empty()) write_text_atomic(*out, foxeval::python_json_dumps(scored.scores, 4));
      print_scores(scored.scores);
      // Whatever could be scored is written; a file that could not be is named, and the exit says so.
      for (const auto& [file, why] : scored.unscored) std::fprintf(stderr, "[longbench score] %s not scored: %s\n", file.c_str(), why.c_str());
      if (!scored.unscored.empty()) {
        std::fprintf(stderr, "foxeval longbench score: %zu of %zu prediction files not scored (above)\n", scored.unscored.size(),
                     scored.unscored.size() + scored.scores.size());
        std::exit(2);
      }
    });
  }
});

}  // namespace
}  // namespace foxeval
