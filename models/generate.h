// Text generation: greedy or temperature/top-p sampling, batched with left padding, prefill in
// chunks through the family's decoding state, then one token per step for all rows.
//
// Semantics (see generate() below for the details):
// - Greedy (temperature 0) = argmax over the fp32 logits of the last position; ties go to the
//   lowest id, as torch.argmax. Logits are the LM head in the compute dtype (bf16 under
//   --dtype bfloat16, as the official autocast), then fp32 — the same as engine.h's logits().
// - A stop id (EOS) ends a row and is NOT part of its generated ids (reason "eos").
// - A stop string ends a row when the decoded generated text (the prompt not included) contains
//   it: the text is cut before its first occurrence, and the ids are truncated to the shortest
//   prefix whose decoded text contains it (so the ids may hold the stop string's tokens, the text
//   never does; reason "stop_string").
// - Rows that finished keep stepping with a dummy token (their state cannot be dropped from the
//   batch through the DecodeState interface); their outputs are frozen. The loop ends when every
//   row has finished.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/model.h"

namespace foxeval {

class Gpt2Tokenizer;

struct GenerateOptions {
  int64_t max_new_tokens = 0;
  double temperature = 0.0;  // 0 = greedy
  double top_p = 1.0;        // nucleus: the smallest most-probable set with mass >= top_p
  uint64_t seed = 0;
  // Row b of the call samples with std::mt19937_64 seeded by seed_seq{seed, first_index + b}, so
  // a prompt's samples do not depend on which batch it falls in (the CLI sets first_index).
  uint64_t first_index = 0;
  // Ids that end a row (excluded from its output). The CLI defaults this to the tokenizer's EOS
  // (50256); generate() itself uses exactly what is given here.
  std::vector<int64_t> stop_ids;
  std::vector<std::string> stop_strings;  // need a tokenizer
  // false: recompute the whole prefix with a fresh forward (no state) every step, row by row
  // (no padding at all). Slow; for verification of the cached path.
  bool use_cache = true;
  int64_t prefill_chunk = 4096;  // prompt tokens per forward in the prefill (cached path)
  int64_t pad_id = 0;            // the token left padding is filled with (excluded exactly)
};

enum class StopReason { length, eos, stop_string };
const char* stop_reason_name(StopReason reason);

struct Generation {
  std::vector<int64_t> ids;  // generated ids (stop id excluded; see above for stop strings)
  std::string text;          // decoded generated text when a tokenizer was given, else empty
  StopReason reason = StopReason::length;
  std::string stop;          // the stop string that matched, or the stop id as text ("eos")
};

// Wall-clock timings of one generate() call. The first token is chosen on the host, so the prefill
// time includes the device work (a host sync); the decode time covers every later step.
struct GenerateStats {
  double prefill_seconds = 0;  // 0 without a cache (everything counts as decode)
  double decode_seconds = 0;
  int64_t decode_steps = 0;    // forward passes after the prefill (one token for all rows each)
  int64_t prompt_tokens = 0;   // padding included (cached path)
  // generate_until's scheduler only: how often running out of GPU memory halved a bucket's
  // decoding slots, and the fewest slots a bucket finished with (0 when no bucket ran).
  int64_t oom_backoffs = 0;
  int64_t min_slots = 0;
};

// One Generation per prompt, in order. Every prompt must hold at least one id; ids must be
// < the model's vocab size. `tok` is needed for stop strings and for Generation::text.
std::vector<Generation> generate(CausalLM& model, const std::vector<std::vector<int64_t>>& prompts,
                                 const GenerateOptions& options, const Gpt2Tokenizer* tok,
                                 GenerateStats* stats = nullptr);

// The next-token choice generate() makes from one row of fp32 logits (exposed for tests):
// greedy when temperature <= 0, else temperature + top-p sampling with `rng`.
int64_t choose_token(const float* logits, int64_t vocab, double temperature, double top_p, std::mt19937_64& rng);

}  // namespace foxeval
