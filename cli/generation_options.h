// The generation scheduler's flags (models/requests.h), the same for every generation task.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/validators.h"
#include "models/requests.h"

namespace foxeval {

inline void add_generation_options(CLI::App* cmd, GenerateUntilOptions& g) {
  cmd->add_option("--batch-size", g.max_batch, "decoding slots (rows decoded together) at most (default 64)")
      ->check(int_range(1, 1 << 16));
  cmd->add_option("--max-batch-tokens", g.max_batch_tokens,
                  "slots x (prompt + new tokens) at most (default 0: as many as fit the GPU's memory)")
      ->check(int_range(0));
  cmd->add_option("--prefill-chunk", g.prefill_chunk, "prompt tokens per forward in the prefill (default 4096)")
      ->check(int_range(1, kMaxContextTokens));
  cmd->add_option("--gpu-memory-fraction", g.gpu_memory_fraction,
                  "share of the GPU's memory the run may fill (default 0.9)")
      ->check(number_range(0.01, 1.0));
  // A callback, not a negated flag: CLI11's help would print a negated flag as "--no-cuda-graphs{false}".
  cmd->add_flag_callback("--no-cuda-graphs", [&g] { g.cuda_graphs = false; }, "decode step by step without CUDA graphs (A/B timing)");
}

}  // namespace foxeval
