// `foxeval loss`: per-position held-out loss as the official eval/per_token_loss.
//
// Protocol: each window of seq_len tokens of a document row is one sequence;
// input = [bos] + row[:seq_len-1], labels = row[:seq_len]. Per-position losses are summed over
// documents exactly (fixed point, see LossSums), so batch sizes, shards merged with
// `foxeval merge` and resumed runs all give bit-identical numbers.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/model.h"

namespace foxeval {

struct LossSettings {
  std::string model_dir;
  std::string data_path;
  std::string out_path;
  int64_t seq_len = 0;                // 0: the row length
  int64_t max_tokens = int64_t(1) << 31;  // the paper: the first 2^31 tokens
  int64_t bos_id = 50256;
  int64_t batch_size = 1;
  int64_t num_shards = 1, shard_index = 0;
  bool resume = false;
  double save_every_seconds = 120.0;
  // Save the state and stop after this many windows (0 = run to the end): for preemptible
  // jobs with a time limit, and for testing resume. A later --resume continues.
  int64_t stop_after_windows = 0;
  RunOptions run;
};

// Sums of per-token losses per position, in 32.32 fixed point: each fp32 loss is rounded to a
// multiple of 2^-32 (2.3e-10, far below fp32 loss rounding) and summed in int64, which is
// associative, so the order of documents (shards, batches, resume) cannot change a bit.
struct LossSums {
  std::vector<int64_t> sum_fixed;  // [seq_len]
  int64_t documents = 0;
  static constexpr double kScale = 4294967296.0;  // 2^32
  void add(const std::vector<float>& losses, int64_t rows, int64_t seq_len);
  double mean(int64_t position) const;
};

// Thrown when a run stopped early (signal or stop_after_windows) after saving its state.
struct LossInterrupted : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The evaluation; returns the result JSON (also written to settings.out_path).
nlohmann::json run_loss(const LossSettings& settings);

// Combines shard results (the "partial" files each shard writes) into one result.
nlohmann::json merge_loss_parts(const std::vector<std::string>& parts, const std::string& out_path);

// val/loss_per_token, val/loss_avg_len_L and val/perplexity_len_L from sums.
nlohmann::json loss_metrics(const LossSums& sums, int64_t seq_len);

}  // namespace foxeval
