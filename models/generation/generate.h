// Text generation for a list of prompts, and the token choice every generation path makes.
//
// There is one generation engine: generate_until's slot scheduler (models/requests.h,
// models/generation/requests_generate.cpp). generate() below only turns a list of prompts into its requests
// and its answers back into Generations (text included), for `foxeval generate` and the tests.
//
// Semantics (one place: requests_generate.cpp's accept and pick):
// - Greedy (temperature 0) = argmax over the logits of the last position; ties go to the lowest
//   id, as torch.argmax. Logits are the LM head in the compute dtype (bf16 under --dtype
//   bfloat16, as the official autocast) — the same as engine.h's logits().
// - A stop id (EOS) ends a row and is NOT part of its generated ids (reason "eos").
// - A stop string ends a row when the decoded generated text (the prompt not included) contains
//   it: the text is cut before its first occurrence, and the ids are truncated to the shortest
//   prefix whose decoded text contains it (so the ids may hold the stop string's tokens, the text
//   never does; reason "stop_string").
// - Sampling: prompt i of a call draws from std::mt19937_64 seeded by
//   seed_seq{seed, first_index + i}, so its samples do not depend on which prompts run beside it.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/model.h"

namespace foxeval {

class Gpt2Tokenizer;

// How a token is drawn from the logits (GenerateUntilOptions::sampling, GenerateOptions).
struct Sampling {
  double temperature = 0.0;  // 0 = greedy
  int64_t top_k = 0;         // keep the k most probable tokens (0 = all), before top_p
  double top_p = 1.0;        // nucleus: the smallest most-probable set with mass >= top_p
  uint64_t seed = 0;
  // Request i of a call samples with std::mt19937_64 seeded by seed_seq{seed, first_index + i}
  // (the CLI passes all its prompts in one call: first_index 0).
  uint64_t first_index = 0;
  bool greedy() const { return temperature <= 0; }
};

struct GenerateOptions {
  int64_t max_new_tokens = 0;
  double temperature = 0.0;  // 0 = greedy
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;
  uint64_t seed = 0;
  uint64_t first_index = 0;  // see Sampling
  // Ids that end a row (excluded from its output). The CLI defaults this to the tokenizer's EOS
  // (50256); generate() itself uses exactly what is given here.
  std::vector<int64_t> stop_ids;
  std::vector<std::string> stop_strings;  // need a tokenizer
  // false: the reference path, every new token from a fresh forward over the whole sequence
  // (no state), prompt by prompt. Slow; for verification of the slots.
  bool use_cache = true;
  int64_t prefill_chunk = 4096;  // prompt tokens per forward in the prefill (cached path)
  int64_t max_batch = 64;        // decoding slots at most
};

enum class StopReason { length, eos, stop_string };
const char* stop_reason_name(StopReason reason);

struct Generation {
  std::vector<int64_t> ids;  // generated ids (stop id excluded; see above for stop strings)
  std::string text;          // decoded generated text when a tokenizer was given, else empty
  StopReason reason = StopReason::length;
  std::string stop;          // the stop string that matched, or the stop id as text ("eos")
};

// Wall-clock timings of one generation call. A request's first token is chosen on the host, so the
// prefill time includes the device work (a host sync); the decode time covers every later step.
struct GenerateStats {
  double prefill_seconds = 0;  // 0 without a cache (everything counts as decode)
  double decode_seconds = 0;
  int64_t decode_steps = 0;    // forward passes after the prefills (one token for every slot each)
  int64_t prompt_tokens = 0;
  // How often running out of GPU memory halved a bucket's decoding slots, and the fewest slots a
  // bucket finished with (0 when no bucket ran).
  int64_t oom_backoffs = 0;
  int64_t min_slots = 0;
};

// One Generation per prompt, in order, through generate_until. Every prompt must hold at least one
// id; ids must be < the model's vocab size. `tok` is needed for stop strings and for
// Generation::text.
std::vector<Generation> generate(CausalLM& model, const std::vector<std::vector<int64_t>>& prompts,
                                 const GenerateOptions& options, const Gpt2Tokenizer* tok,
                                 GenerateStats* stats = nullptr);

// The next-token choice from one row of fp32 logits (exposed for tests): greedy when
// temperature <= 0, else temperature, then top-k, then top-p sampling with `rng`.
int64_t choose_token(const float* logits, int64_t vocab, double temperature, double top_p, std::mt19937_64& rng,
                     int64_t top_k = 0);

}  // namespace foxeval
