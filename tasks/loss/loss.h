// `foxeval loss`: per-position held-out loss as the official eval/per_token_loss.
//
// Protocol: each window of seq_len tokens of a document row is one sequence;
// input = [bos] + row[:seq_len-1], labels = row[:seq_len]. Per-position losses are summed over
// windows exactly (fixed point, see LossSums), so batch sizes, shards merged with
// `foxeval merge`, ranks of a distributed run and resumed runs all give bit-identical numbers.
//
// The task runs on the Runner's reducer mode (tasks/run/runner.h): its items are batches of
// --batch-size consecutive windows, its state the sums (LossState), and the runner does resume,
// saving, signals, shards, ranks and the merge of parts.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "tasks/run/result_file.h"
#include "tasks/run/run_ranks.h"

namespace foxeval {

struct LossSettings {
  std::string model_dir;
  std::string data_path;   // token rows (npy, zarr); or:
  std::string text_source;  // --text: documents to tokenize (tasks/loss/loss_text.h)
  std::string text_field;   // "" = the corpus' field (tasks/loss/text_corpora.json), else "text"
  std::string text_split;   // a save_to_disk DatasetDict's split
  bool pack = false;        // --pack: documents concatenated with separator_id between them
  int64_t separator_id = 50256;
  std::string out_path;
  int64_t seq_len = 0;                // 0: the row length
  int64_t max_tokens = int64_t(1) << 31;  // the paper: the first 2^31 tokens
  int64_t bos_id = 50256;
  int64_t batch_size = 1;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  bool resume = false;
  double save_every_seconds = 120.0;
  // Save the state and stop after this many windows (0 = run to the end): for preemptible
  // jobs with a time limit, and for testing resume. A later --resume continues.
  int64_t stop_after_windows = 0;
  RunOptions run;
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// Sums of per-token losses per position, in 32.32 fixed point: each fp32 loss is rounded to a
// multiple of 2^-32 (2.3e-10, far below fp32 loss rounding) and summed in int64, which is
// associative, so the order of documents (shards, batches, resume) cannot change a bit.
struct LossSums {
  std::vector<int64_t> sum_fixed;  // [seq_len]
  int64_t documents = 0;           // windows summed (the field keeps its historical name)
  static constexpr double kScale = 4294967296.0;  // 2^32
  void add(const std::vector<float>& losses, int64_t rows, int64_t seq_len);
  double mean(int64_t position) const;
};

// The loss task's reducer state: the sums, and how the data was used (each window whose column is
// 0 counts its row, and that row's tail beyond a whole number of windows; the first window counts
// the rows --tokens left unread), all exact int64 sums. On text (--text), rows are documents, and
// the first window also counts the documents shorter than a window, skipped, and their tokens.
struct LossState : ReducerState {
  LossSums sums;
  int64_t rows = 0, tokens_dropped = 0, rows_unread = 0;
  int64_t documents_skipped = 0, tokens_skipped = 0;
  // Each window's loss summed over its first L positions, for every reported L (loss_lengths), in
  // the same fixed point, by window index: the per-document items of the result's per_item
  // (tasks/results/item_stats.h). A union over disjoint windows, so exact in any order; a state saved
  // before foxeval kept them has none, and its result then has no per_item.
  std::map<int64_t, std::vector<int64_t>> window_sums;
  // Adds n windows' losses (row-major, the first is window `first`) to the sums and window_sums.
  void add_windows(const std::vector<float>& losses, int64_t n, int64_t seq_len, int64_t first);
  nlohmann::json to_json() const override;
  void merge(const ReducerState& other) override;
};

// The reducer `foxeval merge` uses (registered as "loss"): states of identity.seq_len positions;
// finish builds loss_result.
Reducer loss_reducer();

// The evaluation; returns the result JSON (also written to settings.out_path, or this shard's
// part). Stopped early (signal, stop_after_windows, a lost rank): throws RunInterrupted after
// saving the state.
nlohmann::json run_loss(const LossSettings& settings);

// The lengths L of val/loss_avg_len_L: seq_len, halved down to 512 (seq_len itself when shorter).
std::vector<int64_t> loss_lengths(int64_t seq_len);

// val/loss_per_token, val/loss_avg_len_L and val/perplexity_len_L from sums.
nlohmann::json loss_metrics(const LossSums& sums, int64_t seq_len);

// The result from every window's state, without what only a live run knows (the model's family,
// data wait, GPU memory): metrics, identity, documents (= windows), rows, tokens dropped, time.
nlohmann::json loss_result(const nlohmann::json& identity, const LossState& state, double elapsed_s);

}  // namespace foxeval
