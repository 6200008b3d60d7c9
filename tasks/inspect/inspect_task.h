// `foxeval inspect gates|attention`: what a checkpoint forgets, from the forward pass every task
// runs (the model hands its decays and one head's q/k to a ForwardCapture, models/model.h).
//
//   gates: per layer and head the decay statistics of tasks/inspect/gate_stats.h over documents,
//          one document per Runner item (journal, resume, shards, the common header).
//   attention: one head's decay matrix exp(c_i - c_j) and attention probabilities
//          softmax_j(q_i.k_j / sqrt(d) + c_i - c_j) (the softmax over every key 0..i) on a span.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/registry.h"
#include "tasks/run/run_ranks.h"

namespace foxeval::inspect {

struct GatesSettings {
  std::string model_dir, out_path;
  std::string data_path;  // a token array (.npy / zarr), one document per row, read as `foxeval loss` does
  std::string text_path;  // or one text, tokenized as LongCrawl64 (JSON-escaped GPT-2, BOS first)
  // Tokens to look at: --data reads the first max(1, tokens / row length) documents, --text keeps
  // the first `tokens` (0: the whole text).
  int64_t max_tokens = 0;
  int64_t bos_id = 50256;  // --data: each row is read as [bos] + row[:-1], the loss protocol's input
  bool resume = false;
  int64_t num_shards = 1, shard_index = 0;
  RunRanks ranks;  // the ranks of one distributed run (tasks/run/distributed.h plan_shards), null: none
  RunOptions run;
  // A model the caller loaded (foxeval suite: once for all its tasks); nullptr: load model_dir.
  std::shared_ptr<const LoadedModel> model;
};

// Default --tokens of --data: 8 documents of LongCrawl64's 65536 tokens.
constexpr int64_t kDefaultDataTokens = int64_t(8) << 16;

// Runs and writes the result (kind foxeval-inspect-gates); a model without a decay gets a result
// that says so (decay.kind "none", no layers) without reading the data. Throws RunInterrupted on a signal.
nlohmann::json run_gates(const GatesSettings& s);

// The result from its identity and the per-document records (item order): the Runner's builder,
// also what `foxeval merge` uses.
nlohmann::json build_gates_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

// One head on a span [begin, end) of `ids` (query rows, key columns, row-major, NaN where j > i).
struct AttentionMaps {
  int64_t layer = 0, head = 0, begin = 0, end = 0;
  std::vector<int64_t> ids;            // the span's tokens
  std::vector<double> decay, attention;  // [(end - begin)^2]
  bool has_decay = true;               // false: no forget gate (decay is 1 everywhere)
  int64_t window = 0;                  // a sliding window W (Transformer (SWA)): decay 1 inside it, 0 outside
};

// Runs the model over ids [T] (batch 1) and computes the maps (float64 from the model's fp32
// q, k and log gates; the decay's c summed in order).
AttentionMaps attention_maps(CausalLM& model, const std::vector<int64_t>& ids, int64_t layer, int64_t head,
                             int64_t begin, int64_t end);

nlohmann::json attention_maps_json(const AttentionMaps& m);

}  // namespace foxeval::inspect
