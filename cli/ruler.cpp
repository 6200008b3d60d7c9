// `foxeval ruler samples | score | run`: RULER (lm-eval 0.4.13's tasks/ruler): its docs without a
// model, the scores of given predictions, and a model's run through the scheduler; `plot ruler`.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/command_output.h"
#include "cli/generation_options.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "tasks/run/distributed.h"
#include "tasks/ruler/ruler_plot.h"
#include "tasks/ruler/ruler_run.h"
#include "tasks/ruler/ruler_samples.h"
#include "tasks/ruler/ruler_score.h"
#include "tasks/ruler/ruler_table.h"

namespace foxeval {
namespace {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// The flags that choose the docs (the same for `samples` and `run`).
void add_samples_options(CLI::App* cmd, ruler::SamplesSettings& s, std::string& tasks, std::string& lengths, const char* model_help) {
  cmd->add_option("--model", s.model_dir, model_help);
  cmd->add_option("--haystack", s.haystack_dir, "folder of .txt essays for the essay tasks (default: baber/paul_graham_essays from the Hugging Face caches)");
  cmd->add_option("--words", s.words_dir, "folder with wonderwords' nounlist.txt, adjectivelist.txt, verblist.txt (default: the installed package's)");
  cmd->add_option("--punkt", s.punkt_dir, "nltk's punkt_tab/english folder (default: found under $NLTK_DATA, ~/nltk_data, ...)");
  cmd->add_option("--squad", s.squad_path, "SQuAD v2 dev (dev-v2.0.json, or its folder) for ruler_qa_squad (default: $FOXEVAL_RULER_DATA, ~/.cache/foxeval/ruler)");
  cmd->add_option("--hotpot", s.hotpot_path, "HotpotQA dev-distractor (hotpot_dev_distractor_v1.json, or its folder) for ruler_qa_hotpot (default: as --squad)");
  cmd->add_option("--tasks", tasks, "tasks in the order lm-eval builds them, e.g. niah_single_1,niah_single_2 (default: the group's 13, in ruler.yaml's order)");
  cmd->add_option("--lengths", lengths, "max_seq_lengths in tokens, e.g. 4096,8192 (default 4096)");
}

void resolve_samples_options(ruler::SamplesSettings& s, const std::string& tasks, const std::string& lengths) {
  s.tasks = split_names(tasks);
  if (!lengths.empty()) {
    s.lengths = parse_int_list(lengths, "--lengths");
    if (s.lengths.empty()) throw Error("--lengths '" + lengths + "': no length given");
  }
}

CommandRegistrar plot_ruler_command([](CLI::App& root) {
  add_score_plot_command(root, "ruler", "RULER score against context length, one line per result, as an SVG",
                         "result JSON files written by `foxeval ruler run` or `ruler score`",
                         "a task (niah_single_1, ruler_vt, ...) or a category (NIAH, \"multi-hop tracing\", aggregation, "
                         "QA) instead of the mean over the tasks run",
                         ruler::plot_ruler_files);
});

CommandRegistrar ruler_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "ruler", "RULER (lm-eval 0.4.13's tasks/ruler): samples equal to lm-eval's, score, run");
  auto s = std::make_shared<ruler::SamplesSettings>();
  auto tasks = std::make_shared<std::string>(), lengths = std::make_shared<std::string>();
  CLI::App* samples = group->add_subcommand("samples", "Write the generated docs as JSONL (lm-eval's --log_samples `doc`)");
  add_samples_options(samples, *s, *tasks, *lengths, "checkpoint directory whose tokenizer sizes the haystacks (default: bundled GPT-2)");
  samples->add_option("-o,--out", s->out_path, "JSONL file to write")->required();
  samples->callback([s, tasks, lengths] {
    resolve_samples_options(*s, *tasks, *lengths);
    ruler::write_samples(*s);
  });

  auto sc = std::make_shared<ruler::ScoreSettings>();
  CLI::App* score = group->add_subcommand("score", "Score predictions of `ruler samples` docs as lm-eval does (per task, length, category)");
  score->add_option("--samples", sc->samples_path, "JSONL from `foxeval ruler samples`")->required();
  score->add_option("--predictions", sc->predictions_path, "JSONL of {\"task\", \"doc_id\", \"prediction\"}, one per doc")->required();
  score->add_option("-o,--out", sc->out_path, "result JSON (with the common header)");
  score->callback([sc] {
    const nlohmann::json r = ruler::score_predictions(*sc);
    std::fputs(ruler::score_table(r).c_str(), stdout);
  });

  // ---- run ----
  auto r = std::make_shared<ruler::RunSettings>();
  auto shards = std::make_shared<ShardArgs>();
  auto run_tasks = std::make_shared<std::string>(), run_lengths = std::make_shared<std::string>();
  CLI::App* run = group->add_subcommand("run", "Generate and score every task at every length (resumable, shardable)");
  add_samples_options(run, r->samples, *run_tasks, *run_lengths, "Hugging Face checkpoint directory or repo id (its tokenizer sizes the haystacks)");
  run->get_option("--model")->required();
  run->add_option("--limit", r->limit, "the first N docs of each task at each length (default: all 500)")->check(int_range(1));
  run->add_option("-o,--out", r->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  run->add_option("--max-length", r->max_length,
                  "keep the last N - max_gen_toks prompt tokens, as lm-eval's HFLM with max_length=N (default: no truncation)")
      ->check(int_range(2, kMaxContextTokens));
  run->add_option("--max-gen-toks", r->max_gen_toks,
                  "new tokens at most for every task, as lm-eval's --gen_kwargs max_gen_toks=N (default: each task's YAML: "
                  "128 NIAH, 30 ruler_vt, 120 ruler_cwe, 50 ruler_fwe, 32 QA)")
      ->check(int_range(1, kMaxContextTokens));
  add_run_options(run, r->run);
  add_generation_options(run, r->generation);
  add_shard_options(run, *shards, "documents", "journal (OUT.journal.jsonl)");
  run->add_option("--stop-after", r->stop_after, "stop after N docs as if interrupted (exit 3; --resume continues)")->check(int_range(1));
  run->callback([run, r, shards, run_tasks, run_lengths] {
    resolve_samples_options(r->samples, *run_tasks, *run_lengths);
    resolve_task_settings(run, "ruler", *shards, *r);
    nlohmann::json result;
    run_task("ruler run", r->ranks, [&] { result = ruler::run_ruler(*r); }, [&] {
      if (!report_shard_part(r->shard_index, r->num_shards)) std::fputs(ruler::score_table(result).c_str(), stdout);
    });
  });
});

}  // namespace
}  // namespace foxeval
