// `foxeval score`: lm-eval's loglikelihood / loglikelihood_rolling requests from a JSONL file
// answered with a model (tasks/lm_eval/request_files.h), one answer line per request line.
#include <memory>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "tasks/lm_eval/request_files.h"

namespace foxeval {
namespace {

CommandRegistrar score_command([](CLI::App& root) {
  auto a = std::make_shared<lm_eval::ScoreRequestSettings>();
  CLI::App* cmd = root.add_subcommand(
      "score", "Log-likelihoods of lm-eval requests (JSONL in, JSONL out), as lm-eval 0.4.4 HFLM(add_bos_token=True)");
  cmd->add_option("--model", a->model, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  cmd->add_option("--requests", a->requests,
                  "JSONL: {\"kind\":\"loglikelihood\",\"context\",\"continuation\"} or "
                  "{\"kind\":\"loglikelihood_rolling\",\"text\"} per line")
      ->required();
  cmd->add_option("-o,--out", a->out, "JSONL: {\"logprob\",\"is_greedy\"} per request line, same order (atomic write)")
      ->required();
  cmd->add_option("--max-length", a->max_length, "HFLM max_length: input window and rolling window size")
      ->check(int_range(1, kMaxContextTokens));
  cmd->add_option("--batch-size", a->batch_size, "requests per forward (0: as many as fit --max-batch-tokens)")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("--max-batch-tokens", a->max_batch_tokens, "padded tokens per forward when --batch-size is 0")
      ->check(int_range(1, int64_t(1) << 40));
  add_run_options(cmd, a->run);
  cmd->callback([cmd, a] {
    resolve_run(cmd, a->run);
    lm_eval::score_request_file(*a);
  });
});

}  // namespace
}  // namespace foxeval
