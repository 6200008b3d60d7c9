// `foxeval niah prompts|run|score` and `foxeval plot niah`: the paper's needle-in-a-haystack sweep.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/generation_options.h"
#include "cli/path_roles.h"
#include "cli/validators.h"
#include "tasks/run/distributed.h"
#include "tasks/run/launcher_env.h"
#include "tasks/niah/heatmap.h"
#include "tasks/niah/niah_judge.h"
#include "tasks/niah/niah_prompts.h"
#include "tasks/niah/niah_rescore.h"
#include "tasks/niah/niah_task.h"
#include "tasks/niah/niah_table.h"
#include "tasks/run/runner.h"

namespace foxeval {
namespace {

// parse_int_list, refusing an empty item ("300,,400", a leading or trailing comma) instead of
// skipping it: a grid typed wrong must not run as another grid.
std::vector<int64_t> grid_list(const std::string& text, const std::string& flag) {
  bool item = false, comma = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ',') {
      if (!item) throw Error(fmt::format("{}: an empty item at character {} of '{}'", flag, i, text.substr(0, 40)));
      item = false;
      comma = true;
    } else if (c != '[' && c != ']' && !std::isspace(static_cast<unsigned char>(c))) {
      item = true;
    }
  }
  if (comma && !item) throw Error(fmt::format("{}: an empty item at the end of '{}'", flag, text.substr(0, 40)));
  return parse_int_list(text, flag);
}

struct SpecArgs {
  niah::NiahSpec spec;
  std::string lengths, depths;
  CLI::Option* lengths_flag = nullptr;  // given (even as ''): its list replaces the default grid
  CLI::Option* depths_flag = nullptr;
  niah::NiahSpec parsed() const {
    niah::NiahSpec s = spec;
    const bool has_lengths = lengths_flag && lengths_flag->count() > 0, has_depths = depths_flag && depths_flag->count() > 0;
    if (has_lengths) s.lengths = grid_list(lengths, "--lengths");
    if (has_depths) s.depths = grid_list(depths, "--depths");
    if (has_lengths && s.lengths.empty())
      throw Error(fmt::format("--lengths '{}': no length given (give lengths in tokens, e.g. 1000,4100, or leave the flag "
                              "out for the paper's grid)", lengths));
    if (has_depths && s.depths.empty())
      throw Error(fmt::format("--depths '{}': no depth given (give percents in 0..100, e.g. 0,50,100, or leave the flag "
                              "out for the default)", depths));
    for (int64_t L : s.lengths)
      if (L < 1 || L > kMaxContextTokens)
        throw Error(fmt::format("--lengths: {} is out of range: a context length is 1..{} tokens", L, kMaxContextTokens));
    return s;
  }
};

void add_spec_options(CLI::App* cmd, SpecArgs& a) {
  cmd->add_option("--mode", a.spec.mode, "standard or easy (config-prompt-<mode>.yaml's needle and question)")
      ->type_name(fmt::format("{{{}}}", fmt::join(niah::known_modes(), ",")));  // help lists the choices; load_mode refuses others, listing them
  a.lengths_flag = cmd->add_option("--lengths", a.lengths,
                                   "context lengths in tokens, e.g. 1000,4100 (default: the paper's 11 up to 32000)");
  a.depths_flag = cmd->add_option("--depths", a.depths, "needle depths in percent, e.g. 0,50,100 (default: 0,10,...,100)");
  cmd->add_option("--needle", a.spec.needle, "override the mode's needle (needs --answer)");
  cmd->add_option("--question", a.spec.question, "override the mode's retrieval question");
  cmd->add_option("--answer", a.spec.answer, "the words of the needle the offline scorer looks for");
}

void add_judge_options(CLI::App* cmd, niah::JudgeSettings& j) {
  cmd->add_option("--judge-url", j.url, "OpenAI-compatible chat-completions URL: also score with a judge (eval.py's prompt)");
  cmd->add_option("--judge-model", j.model, "the judge's model name (the paper: gpt-4o-2024-08-06)");
  cmd->add_option("--judge-key-env", j.api_key_env,
                  "environment variable holding the API key (default OPENAI_API_KEY, used when set; a variable "
                  "named here must be set)")
      ->each([&j](const std::string&) { j.api_key_required = true; });
  cmd->add_option("--judge-tries", j.tries, "requests per cell before giving up (default 5, as eval.py)")
      ->check(int_range(1, 100));
  cmd->add_option("--judge-backoff", j.backoff_seconds, "seconds before the first retry, doubled each time (default 1)")
      ->check(number_range(0.0, 3600.0));
  cmd->add_option("--judge-timeout", j.timeout_seconds, "seconds per request, the whole request (default 120)")
      ->check(number_range(0.0, 86400.0, true));
}

CommandRegistrar niah_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "niah", "Needle in a haystack: prompts, the sweep, scoring");

  // ---- prompts ----
  auto pa = std::make_shared<SpecArgs>();
  auto p_hay = std::make_shared<std::string>(), p_out = std::make_shared<std::string>();
  CLI::App* prompts = group->add_subcommand("prompts", "Write the official prompt.py files (one per cell)");
  prompts->add_option("--haystack", *p_hay, "folder of .txt files (Paul Graham essays)")->required();
  prompts->add_option("-o,--out", *p_out, "folder for Huggingface_len_L_depth_D_prompts.json")->required();
  add_spec_options(prompts, *pa);
  prompts->callback([pa, p_hay, p_out] {
    const int64_t n = niah::write_prompt_files(pa->parsed(), *p_hay, *p_out);
    std::printf("wrote %lld prompt files to %s\n", static_cast<long long>(n), p_out->c_str());
  });

  // ---- run ----
  auto ra = std::make_shared<SpecArgs>();
  auto rs = std::make_shared<niah::RunSettings>();
  auto shards = std::make_shared<ShardArgs>();
  CLI::App* run = group->add_subcommand("run", "The whole sweep: generate every cell, score, write RESULT.json");
  run->add_option("--model", rs->model_dir, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  run->add_option("--haystack", rs->haystack_dir, "folder of .txt files (Paul Graham essays)")->required();
  run->add_option("-o,--out", rs->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  add_spec_options(run, *ra);
  run->add_option("--max-new-tokens", rs->max_new_tokens, "greedy tokens per cell, unless EOS (default 1024, as pred.py)")
      ->check(int_range(1, kMaxNewTokens));
  mark_output(run->add_option("--pred-dir", rs->pred_dir, "also write pred.py's layout: Huggingface_len_L_depth_D.txt + .txt.done"));
  add_generation_options(run, rs->generation);
  add_run_options(run, rs->run);
  add_shard_options(run, *shards, "cells", "journal (OUT.journal.jsonl)");
  run->add_option("--stop-after", rs->stop_after, "stop (exit 3, resumable) after the N-th cell finishes (default: none)")
      ->check(int_range(0));
  run->callback([run, ra, rs, shards] {
    rs->spec = ra->parsed();
    // torchrun/srun/mpirun with a store address and no --num-shards: one shared run (tasks/run/distributed.h).
    resolve_task_settings(run, "niah", *shards, *rs);
    nlohmann::json result;
    run_task("niah run", rs->ranks, [&] { result = niah::run_sweep(*rs); }, [&] { niah::print_summary(result); });
  });

  // ---- score ----
  auto sa = std::make_shared<SpecArgs>();
  auto ss = std::make_shared<niah::RescoreSettings>();
  CLI::App* score = group->add_subcommand("score", "Score a pred.py folder or re-score a result (optionally with a judge)");
  score->add_option("--pred-dir", ss->pred_dir, "folder of Huggingface_len_L_depth_D.txt (+ .txt.done), from foxeval or pred.py");
  score->add_option("--result", ss->result_path, "a `foxeval niah run` result to re-score (mode and answer from it)");
  score->add_option("-o,--out", ss->out_path, "scored result JSON")->required();
  add_spec_options(score, *sa);
  add_judge_options(score, ss->judge);
  score->callback([sa, ss] {
    ss->spec = sa->parsed();
    niah::print_summary(niah::rescore(*ss));
  });
});

CommandRegistrar plot_niah_command([](CLI::App& root) {
  CLI::App* plot = command_group(root, "plot", "Draw result files");
  auto files = std::make_shared<std::vector<std::string>>();
  auto labels = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto judge = std::make_shared<bool>(false);
  auto train = std::make_shared<int64_t>(0);
  CLI::App* cmd = plot->add_subcommand("niah", "NIAH heatmaps (depth x length, score 1-10), one panel per result");
  cmd->add_option("results", *files, "`foxeval niah` result files")->required();
  cmd->add_option("--label", *labels, "panel title per file, in order (default: the model folder's name)");
  cmd->add_option("-o,--out", *out, "SVG file")->required();
  cmd->add_flag("--judge", *judge, "colour by the judge's ratings instead of the offline score");
  cmd->add_option("--train-length", *train, "dashed line at this context length, the training one (the paper: 16384; default 0: none)")
      ->check(int_range(0, kMaxContextTokens));
  cmd->callback([files, labels, out, judge, train] {
    niah::plot_niah_files(*files, *labels, *out, *judge, *train);
    std::printf("wrote %s\n", out->c_str());
  });
});

}  // namespace
}  // namespace foxeval
