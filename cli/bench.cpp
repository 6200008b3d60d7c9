// `foxeval bench NAME`: the benchmarks' command lines. Each fills its bench's settings from the
// flags and calls its run function in bench/ (bench/bench_NAME.h); nothing here times or writes.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bench/bench.h"
#include "cli/command.h"
#include "cli/path_roles.h"
#include "cli/run_options.h"
#include "cli/validators.h"

namespace foxeval {
namespace {

// The `foxeval bench NAME` subcommand (the bench group made on first use).
CLI::App* bench_subcommand(CLI::App& root, const std::string& name, const std::string& about) {
  return command_group(root, "bench", "Time kernels and components")->add_subcommand(name, about);
}

// --repeats and --warmup of the benches that time model forwards (their defaults as set in the
// settings).
void add_forward_repeats(CLI::App* sub, int64_t& repeats, int64_t& warmup) {
  sub->add_option("--repeats", repeats, "timed forwards per row, median (default " + std::to_string(repeats) + ")")
      ->check(int_range(1, 1000));
  sub->add_option("--warmup", warmup, "untimed forwards first (default " + std::to_string(warmup) + ")")->check(int_range(0, 1000));
}

// The last options of a model bench: the run options, then -o/--out (`out_help`); the callback
// resolves the run options, then runs the bench.
void add_run_and_out(CLI::App* sub, RunOptions& run, bool pruning, std::string& out, const std::string& out_help,
                     std::function<void()> go) {
  add_run_options(sub, run, pruning);
  sub->add_option("-o,--out", out, out_help);
  sub->callback([sub, &run, go] {
    resolve_run(sub, run);
    go();
  });
}

// The decoding benches' first options: --model and the grid, --batch and --prompt-len (`batch_what`
// and `len_what`: what their values are).
template <typename Args>
void add_model_and_grid(CLI::App* sub, Args& a, const std::string& batch_what, const std::string& len_what) {
  sub->add_option("--model", a.model, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  sub->add_option("--batch", a.batches, batch_what + ", comma separated (default " + a.batches + ")");
  sub->add_option("--prompt-len", a.prompt_lens, len_what + ", comma separated (default " + a.prompt_lens + ")");
}

// The decoding benches' (decode, generate) last options: --bandwidth-gbs, --seed, the run options
// and --out (default results/bench/{stem}-<gpu>.json).
void add_decode_bench_options(CLI::App* sub, DecodeBenchArgs& a, const std::string& stem, std::function<void()> go) {
  sub->add_option("--bandwidth-gbs", a.bandwidth_gbs, "memory bandwidth for the bound on the CPU, GB/s (on a GPU it is measured)")
      ->check(positive_number());
  sub->add_option("--seed", a.seed, "seed of the random prompt ids")->check(unsigned_integer());
  add_run_and_out(sub, a.run, /*pruning=*/true, a.out, "JSON output path (default results/bench/" + stem + "-<gpu>.json)",
                  std::move(go));
}

const CommandRegistrar bench_attention_command([](CLI::App& root) {
  CLI::App* sub = bench_subcommand(root, "attention", "Time Forgetting Attention CUDA kernels against SDPA (flash and default)");
  auto opt = std::make_shared<BenchAttentionOptions>();
  sub->add_option("-o,--out", opt->out, "JSON output path (default results/bench/attention-<gpu>.json)");
  sub->add_option("--warmup", opt->warmup, "warm-up calls per kernel")->check(int_range(0, 1000));
  sub->add_option("--repeats", opt->repeats, "timed calls per kernel (median reported)")->check(int_range(1, 10000));
  sub->add_option("--head-dim", opt->head_dim, "only shapes with this head dim (default 0 = all)")->check(int_range(0, 4096));
  sub->add_flag("--quick", opt->quick, "small shapes only (smoke test)");
  sub->add_option("--window", opt->window, "also time the ungated prefill with this sliding window (Transformer (SWA))")
      ->check(int_range(1, 1 << 30));
  sub->callback([opt] { run_bench_attention(*opt); });
});

const CommandRegistrar bench_decode_command([](CLI::App& root) {
  auto a = std::make_shared<BenchDecodeArgs>();
  CLI::App* sub = bench_subcommand(root, "decode", "Prefill and decode throughput vs the memory-bandwidth bound");
  add_model_and_grid(sub, *a, "batch sizes", "contexts");
  sub->add_option("--new-tokens", a->new_tokens, "decode steps timed per row (default 64)")->check(int_range(2, int64_t(1) << 20));
  sub->add_option("--prefill-chunk", a->prefill_chunk, "prompt tokens per prefill forward (default 4096)")->check(int_range(1, kMaxContextTokens));
  add_decode_bench_options(sub, *a, "decode", [a] { run_bench_decode(*a); });
});

const CommandRegistrar bench_generate_command([](CLI::App& root) {
  auto a = std::make_shared<BenchGenerateArgs>();
  CLI::App* sub = bench_subcommand(root, "generate", "End-to-end generation through the scheduler vs the memory-bandwidth bound");
  add_model_and_grid(sub, *a, "requests per row (slots at most)", "prompt lengths");
  sub->add_option("--new-tokens", a->new_tokens, "new tokens per request (default 256)")
      ->check(int_range(2, int64_t(1) << 20));
  sub->add_option("--memory-check-len", a->memory_check_len,
                  "prompt length of the batch-1 memory check (default 32768; 0: none)")
      ->check(int_range(0, kMaxContextTokens));
  sub->add_option("--memory-limit-gib", a->memory_limit_gib, "the memory check's limit, GiB (default 8)")
      ->check(positive_number());
  sub->add_option("--anchor", a->anchor, "HF generate rows (scripts/bench_generate_anchor.py's JSON) to put beside");
  sub->add_option("--prefill-chunk", a->gen.prefill_chunk, "prompt tokens per forward in the prefill (default 4096)")
      ->check(int_range(1, kMaxContextTokens));
  sub->add_option("--gpu-memory-fraction", a->gen.gpu_memory_fraction,
                  "share of the GPU's memory the scheduler may fill (default 0.9)")
      ->check(number_range(0.01, 1.0));
  sub->add_flag_callback("--no-cuda-graphs", [a] { a->gen.cuda_graphs = false; }, "decode step by step without CUDA graphs (A/B timing)");
  add_decode_bench_options(sub, *a, "generate", [a] { run_bench_generate(*a); });
});

const CommandRegistrar bench_prefill_command([](CLI::App& root) {
  auto a = std::make_shared<BenchPrefillArgs>();
  CLI::App* sub = bench_subcommand(root, "prefill", "Per-token loss forward: seconds per document and where the time goes");
  sub->add_option("--models", a->models, "NAME=DIR,... (NAME labels the rows)")->required();
  sub->add_option("--seq-lens", a->seq_lens, "document lengths, comma separated (default 65536,16384)");
  add_forward_repeats(sub, a->repeats, a->warmup);
  sub->add_option("--seed", a->seed, "seed of the random token ids")->check(unsigned_integer());
  // Unpruned: `bench pruning` measures pruning.
  add_run_and_out(sub, a->run, /*pruning=*/false, a->out, "JSON output (default results/bench/prefill-<gpu>.json)",
                  [a] { run_bench_prefill(*a); });
});

const CommandRegistrar bench_pruning_command([](CLI::App& root) {
  auto a = std::make_shared<BenchPruningArgs>();
  CLI::App* sub = bench_subcommand(root, "pruning",
                                   "FoX adaptive computation pruning: time, loss difference and error bound at forget-gate levels");
  sub->add_option("--model", a->model, "a FoX checkpoint folder")->required();
  sub->add_option("--seq-len", a->seq_len, "tokens per document (default 65536)")->check(int_range(2, kMaxContextTokens));
  sub->add_option("--documents", a->documents, "random documents per level (default 2)")->check(int_range(1, 1000));
  sub->add_option("--seed", a->seed, "splitmix64 seed of the token ids (document d uses seed + d)")->check(unsigned_integer());
  sub->add_option("--levels", a->levels,
                  "forget-gate bias shifts, comma separated (default -4,-2,0,2,4,6,8; write --levels=-4,... for a "
                  "leading minus)");
  sub->add_option("--tolerances", a->tolerances, "log pruning tolerances, comma separated, each < 0 (default -10,-5)");
  // The tolerances are --tolerances.
  add_run_and_out(sub, a->run, /*pruning=*/false, a->out, "JSON output (default results/bench/pruning-<model>-<gpu>.json)",
                  [a] { run_bench_pruning(*a); });
});

const CommandRegistrar bench_recurrent_command([](CLI::App& root) {
  auto a = std::make_shared<BenchRecurrentArgs>();
  CLI::App* sub = bench_subcommand(root, "recurrent", "Per-token loss of Mamba-2 / HGRN2 / DeltaNet: kernels, ATen, official anchor");
  sub->add_option("--models", a->models, "FAMILY=DIR,... with FAMILY mamba2, hgrn2 or delta_net")->required();
  sub->add_option("--seq-lens", a->seq_lens, "lengths, comma separated (default 16384,65536)");
  sub->add_option("--anchor", a->anchor, "scripts/bench_recurrent_anchor.py's JSON (official code on its kernels)");
  sub->add_option("--impls", a->impls, "kernel and/or aten (default kernel,aten)");
  add_forward_repeats(sub, a->repeats, a->warmup);
  sub->add_option("--seed", a->seed, "splitmix64 seed of the token ids (the anchor's --seed)")->check(unsigned_integer());
  sub->add_option("--loss-tolerance", a->loss_tolerance, "|mean loss - anchor's| that counts as agreeing (default 5e-3)")
      ->check(positive_number());
  // No FoX here.
  add_run_and_out(sub, a->run, /*pruning=*/false, a->out, "JSON output (default results/bench/recurrent-760m-<gpu>.json)",
                  [a] { run_bench_recurrent(*a); });
});

const CommandRegistrar bench_tokenizer_command([](CLI::App& root) {
  auto a = std::make_shared<BenchTokenizerArgs>();
  CLI::App* sub = bench_subcommand(root,
      "tokenizer", "Time GPT-2 tokenization (one thread) of text files, JSON-escaped");
  sub->add_option("--file", a->files, "text files to encode")->required()->check(CLI::ExistingFile);
  mark_output(sub->add_option("-o,--out,--json", a->json_out, "also write the results to this JSON file (--json: its older name)"));
  sub->add_option("--repeats", a->repeats, "timed runs after one warm-up (median reported)")->check(int_range(1, 10000));
  sub->add_option("--model", a->model, "model directory with vocab.json/merges.txt");
  sub->callback([a]() { run_bench_tokenizer(*a); });
});

}  // namespace
}  // namespace foxeval
