// The benchmarks of `foxeval bench NAME`: each one's settings (filled from its flags by
// cli/bench.cpp) and its run function, which prints its table and writes its document under
// results/bench/ (bench/bench_NAME.cpp; what they share: bench/bench_common.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "models/requests.h"  // GenerateUntilOptions

namespace foxeval {

// ---- `foxeval bench attention` (bench/bench_attention.cpp)
// The CUDA Forgetting Attention kernels against PyTorch's SDPA (flash and
// its default backend) on the same tensors.
struct BenchAttentionOptions {
  std::string out;
  int warmup = 3;
  int repeats = 10;
  bool quick = false;
  int head_dim = 0;  // 0 = all
  int64_t window = 0;  // > 0: also the ungated kernel with this sliding window (prefill rows)
};

// Runs the bench (CUDA only), prints its table and writes its document (results/bench/attention-<gpu>.json).
void run_bench_attention(const BenchAttentionOptions& opt);

// What the decoding benches (decode, generate) share on the command line.
struct DecodeBenchArgs {
  std::string out;
  double bandwidth_gbs = 3000;
  uint64_t seed = 0;
  RunOptions run;
};

// ---- `foxeval bench decode` (bench/bench_decode.cpp)
// Decode steps over decoding slots, eager and as a CUDA graph, against the
// memory-bandwidth bound of a step; and batch-1 prefill.
struct BenchDecodeArgs : DecodeBenchArgs {
  std::string model, batches = "1,4,16,64", prompt_lens = "1024,8192,32768";
  int64_t new_tokens = 64, prefill_chunk = 4096;
};

// Runs the bench, prints its table and writes its document (results/bench/decode-<gpu>.json).
void run_bench_decode(const BenchDecodeArgs& a);

// ---- `foxeval bench generate` (bench/bench_generate.cpp)
// End-to-end generation through the scheduler (generate_until) on
// synthetic prompts against the memory-bandwidth bound, beside HF generate.
struct BenchGenerateArgs : DecodeBenchArgs {
  std::string model, batches = "1,4,16,64", prompt_lens = "1024,8192,32768", anchor;
  int64_t new_tokens = 256, memory_check_len = 32768;
  double memory_limit_gib = 8;
  GenerateUntilOptions gen;
};

// Runs the bench, prints its table and writes its document (results/bench/generate-<gpu>.json).
void run_bench_generate(const BenchGenerateArgs& a);

// ---- `foxeval bench prefill` (bench/bench_prefill.cpp)
// The per-token loss forward `foxeval loss` runs, seconds per document
// and a stage table of where the time goes.
struct BenchPrefillArgs {
  std::string models, seq_lens = "65536,16384", out;
  int64_t repeats = 3, warmup = 1;
  uint64_t seed = 0;
  RunOptions run;
};

// Runs the bench, prints its table and writes its document (results/bench/prefill-<gpu>.json).
void run_bench_prefill(const BenchPrefillArgs& a);

// ---- `foxeval bench pruning` (bench/bench_pruning.cpp)
// FoX adaptive computation pruning at forget-gate levels: time, loss
// difference and the kernel's error against its bound.
struct BenchPruningArgs {
  std::string model, levels = "-4,-2,0,2,4,6,8", tolerances = "-10,-5", out;
  int64_t seq_len = 65536, documents = 2;
  uint64_t seed = 0;
  RunOptions run;
};

// Runs the bench (CUDA only), prints its table and writes its document
// (results/bench/pruning-<model>-<gpu>.json).
void run_bench_pruning(const BenchPruningArgs& a);

// ---- `foxeval bench recurrent` (bench/bench_recurrent.cpp)
// Per-token loss forward of the recurrent families (Mamba-2, HGRN2,
// DeltaNet) with the fused kernels and the exact ATen forms, beside the official code.
// Mean losses of foxeval and the anchor agree when within this: both are bf16 computations of
// the same function on the same ids; the official code's own bf16-vs-fp32 per-token difference on
// the reference models is 0.001-0.004 mean (../shared/fixtures/README.md), so a mean over T
// tokens of two bf16 implementations differs by at most about that.
constexpr double kDefaultLossTolerance = 5e-3;

struct BenchRecurrentArgs {
  std::string models, seq_lens = "16384,65536", anchor, out, impls = "kernel,aten";
  int64_t repeats = 2, warmup = 1;
  uint64_t seed = 0;
  double loss_tolerance = kDefaultLossTolerance;
  RunOptions run;
};

// Runs the bench, prints its table and writes its document (results/bench/recurrent-760m-<gpu>.json).
void run_bench_recurrent(const BenchRecurrentArgs& a);

// ---- `foxeval bench tokenizer` (bench/bench_tokenizer.cpp)
// Single-thread GPT-2 tokenization speed of text files, JSON-escaped, to
// compare with scripts/bench_tokenizer_tiktoken.py.
struct BenchTokenizerArgs {
  std::vector<std::string> files;
  std::string json_out, model;
  int repeats = 7;
};

// Runs the bench and prints its table; writes its document to json_out when that is given.
void run_bench_tokenizer(const BenchTokenizerArgs& a);

}  // namespace foxeval
