// `foxeval lm-eval requests` and `foxeval lm-eval run`: the paper's lm-evaluation-harness 0.4.4
// tasks (tasks/lm_eval/), zero-shot, as the official eval/lm_eval_harness/run_lm_eval.py runs them.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/distributed.h"
#include "tasks/launcher_env.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/runner.h"

namespace foxeval {
namespace {

const char* const kTaskHelp =
    "comma-separated lm-eval task names: wikitext, lambada_openai, piqa, hellaswag, winogrande, arc_easy, "
    "arc_challenge, boolq, sciq, copa, openbookqa";
const char* const kDataHelp =
    "folder of DIR/{task}.jsonl or DIR/{task}.parquet: the evaluated split of each Hugging Face dataset, "
    "with its own field names";

void write_request_lines(const std::string& tasks, const std::string& data_dir, int64_t limit, const std::string& out) {
  if (limit == 0 || limit < -1) throw Error(fmt::format("--limit {}: must be positive", limit));
  std::string text;
  size_t count = 0;
  for (const lm_eval::TaskConfig& c : lm_eval::parse_task_list(tasks))
    for (const nlohmann::json& line : lm_eval::request_lines(lm_eval::load_task_docs(c, data_dir, limit))) {
      text += line.dump() + "\n";
      ++count;
    }
  const std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(text.data(), static_cast<std::streamsize>(text.size())) || !f.flush())
      throw Error(fmt::format("--out: cannot write {}", tmp));
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) throw Error(fmt::format("--out: cannot rename {} to {}", tmp, out));
  std::fprintf(stderr, "[lm-eval] %zu requests written to %s\n", count, out.c_str());
}

void print_results(const nlohmann::json& result) {
  if (!result.contains("results")) return;  // a shard part: `foxeval merge` makes the result
  for (auto& [task, r] : result["results"].items())
    for (auto& [key, v] : r.items()) {
      if (key == "alias" || key.find("_stderr,") != std::string::npos) continue;
      const std::string se_key = key.substr(0, key.find(',')) + "_stderr" + key.substr(key.find(','));
      const nlohmann::json& se = r.value(se_key, nlohmann::json("N/A"));
      std::printf("%s\t%s\t%.6f\t%s\n", task.c_str(), key.c_str(), v.get<double>(),
                  se.is_number() ? fmt::format("{:.6f}", se.get<double>()).c_str() : "N/A");
    }
}

CommandRegistrar lm_eval_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "lm-eval", "lm-evaluation-harness 0.4.4 tasks of the paper (zero-shot)");

  struct RequestArgs {
    std::string tasks, data, out;
    int64_t limit = -1;
  };
  auto r = std::make_shared<RequestArgs>();
  CLI::App* req = group->add_subcommand("requests", "Write every request as lm-eval builds it (no model needed)");
  req->add_option("--tasks", r->tasks, kTaskHelp)->required();
  req->add_option("--data", r->data, kDataHelp)->required();
  req->add_option("--out", r->out, "requests, one JSON object per line")->required();
  req->add_option("--limit", r->limit, "only the first N documents of each task (lm-eval's --limit)")->check(int_range(1));
  req->callback([r] { write_request_lines(r->tasks, r->data, r->limit, r->out); });

  auto s = std::make_shared<lm_eval::LmEvalSettings>();
  auto shards = std::make_shared<std::pair<int64_t, int64_t>>(-1, -1);
  CLI::App* run = group->add_subcommand("run", "Evaluate a model on the tasks; lm-eval's results dict");
  run->add_option("--model", s->model_dir, "Hugging Face checkpoint directory")->required();
  run->add_option("--tasks", s->tasks, kTaskHelp)->required();
  run->add_option("--data", s->data_dir, kDataHelp)->required();
  run->add_option("--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  run->add_option("--limit", s->limit, "only the first N documents of each task (lm-eval's --limit)")->check(int_range(1));
  run->add_option("--batch-size", s->batch_size, "requests per forward (default: as many as fit --max-batch-tokens)")
      ->check(int_range(1, 1 << 20));
  run->add_option("--max-batch-tokens", s->max_batch_tokens, "tokens per forward when --batch-size is not set")
      ->check(int_range(1, int64_t(1) << 40));
  run->add_option("--max-length", s->max_length, "HFLM max_length: longer requests keep their end (default 16384)")
      ->check(int_range(2, kMaxContextTokens));
  run->add_option("--log-samples", s->log_samples_path, "write per-document details (JSON lines) here");
  run->add_option("--device", s->run.device, "cpu or cuda[:N]");
  add_pruning_option(run, s->run);
  run->add_option("--dtype", s->run.dtype, "float32 or bfloat16 (the official bf16 autocast numerics)")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  run->add_flag("--resume", s->resume, "continue an interrupted run from its journal");
  run->add_option("--num-shards", shards->first, "split documents over N shards (default: from the launcher)")
      ->check(int_range(1, 1 << 20));
  run->add_option("--shard-index", shards->second, "this shard (default: from the launcher)")->check(int_range(0, 1 << 20));
  run->add_option("--stop-after", s->stop_after_docs, "stop (exit 3, resumable) after N documents")->check(int_range(0));
  run->callback([s, shards] {
    // One shared run under torchrun/srun/mpirun, else static shards (tasks/distributed.h).
    const ShardPlan plan = plan_shards("lm-eval", shards->first, shards->second);
    s->num_shards = plan.num_shards;
    s->shard_index = plan.shard_index;
    s->run.device = device_for_local_rank(s->run.device, plan.local_rank);
    try {
      const nlohmann::json result = lm_eval::run_lm_eval(*s);
      std::signal(SIGINT, SIG_IGN);  // written: a late signal must not turn this into a killed run
      std::signal(SIGTERM, SIG_IGN);
      print_results(result);
    } catch (const RunInterrupted& e) {
      std::fprintf(stderr, "foxeval lm-eval: %s\n", e.what());
      std::exit(3);  // distinct from errors: the journal is saved, --resume continues
    }
  });
});

}  // namespace
}  // namespace foxeval
