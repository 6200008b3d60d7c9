// Requests: the engine's boundary (lm-evaluation-harness's design). Tasks build requests of
// token ids and score the answers; they never touch a model. Two kinds of work:
//   loglikelihood(context, continuation) -> (logprob, is_greedy)   (loglikelihood_rolling is a
//       task-side split of a text into such requests, as lm-eval's rolling windows)
//   generate_until(prompt, max_new_tokens, stop ids/strings) -> generated ids (greedy or sampled)
// Answers come back through a callback as each request finishes, so a task can journal it at
// once (tasks/run/runner.h); which batch a request fell in never changes its answer beyond the
// numerics of the device (see README: batching).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/generation/generate.h"
#include "models/model.h"

namespace foxeval {

// ---- loglikelihood ----------------------------------------------------------------------------

struct LoglikelihoodRequest {
  std::vector<int64_t> context;       // non-empty (lm-eval puts BOS/EOT here when the context is empty)
  std::vector<int64_t> continuation;  // non-empty
};

struct LoglikelihoodAnswer {
  double logprob = 0;      // sum over the continuation's tokens of log p(token | everything before)
  bool is_greedy = false;  // every continuation token is the argmax at its position
};

struct LoglikelihoodOptions {
  // As lm-eval's HFLM: the model sees (context + continuation)[-(max_length + 1):][:-1], so a too
  // long request keeps its end.
  int64_t max_length = 16384;
  int64_t batch_size = 0;         // requests per forward; 0: as many as fit max_batch_tokens
  int64_t max_batch_tokens = 32768;
};

// Answers every request; `on_done(i, answer)` is called once per request i (in any order).
void loglikelihood(CausalLM& model, const std::vector<LoglikelihoodRequest>& requests,
                   const LoglikelihoodOptions& options,
                   const std::function<void(size_t, const LoglikelihoodAnswer&)>& on_done);

// ---- generate_until ---------------------------------------------------------------------------

struct GenerationRequest {
  std::vector<int64_t> prompt;   // with BOS where the task wants it; non-empty
  int64_t max_new_tokens = 0;
  std::vector<int64_t> stop_ids;  // e.g. {eos}; the stop id is not part of the answer
  // Stop strings (models/generation/generate.h says how they cut); need GenerateUntilOptions::tokenizer.
  std::vector<std::string> stop_strings = {};  // "= {}": brace-initialised requests may leave it out
};

struct GenerationAnswer {
  std::vector<int64_t> ids;  // generated ids, stop id excluded
  StopReason reason = StopReason::length;
  std::string stop;  // the stop string that matched, or the stop id as text; empty for "length"
  std::string text;  // the decoded ids (cut before a stop string) when a tokenizer was given
};

// What one generate_until call has done so far, passed to GenerateUntilOptions::on_progress after
// every prefill and every decode run (steps_per_look steps): a task can show progress inside a
// group of long generations, where no request may finish for minutes.
struct GenerationProgress {
  int64_t requests_done = 0;  // of this call's requests
  int64_t new_tokens = 0;     // tokens generated so far, every row (a stop token counts: it took a step)
  GenerateStats stats;        // prompt tokens prefilled, prefill and decode seconds so far
};

struct GenerateUntilOptions {
  int64_t max_batch = 64;          // decoding slots (rows decoded together) at most
  int64_t max_batch_tokens = 0;    // slots x capacity at most; 0: as many as fit the GPU's memory
  int64_t prefill_chunk = 4096;    // prompt tokens per prefill forward
  int64_t prefill_per_look = 16384;  // prompt tokens prefilled between decode runs while rows decode
  int64_t steps_per_look = 16;     // decode steps between two looks of the host at the tokens
  double gpu_memory_fraction = 0.9;  // of the GPU's memory, for weights + slots + activations
  bool cuda_graphs = true;         // capture the decode step in a CUDA graph (GPU; greedy only)
  // Greedy by default. Sampling picks every token on the host from the step's logits (one step a
  // look, no CUDA graph); request i draws from its own generator (models/generation/generate.h: Sampling).
  Sampling sampling;
  // false: the reference path, no state and no slots: every new token from a forward over the
  // whole sequence, request by request (slow; what the slots are tested against).
  bool use_cache = true;
  // Decodes stop strings and GenerationAnswer::text; null: no text (tasks decode what they need).
  const Gpt2Tokenizer* tokenizer = nullptr;
  std::function<void(const GenerationProgress&)> on_progress;  // optional; never changes an answer
};

// The scheduler's memory plan for one bucket, as generate_until makes it with the device memory in
// use now: the `capacity` (tokens a slot holds) for requests of `total_tokens` (prompt + new tokens)
// and the decoding `slots` it runs `queued` such requests with. `memory_slots` is how many slots
// the memory budget alone allows (0: not even one; -1: no memory plan, i.e. CPU or
// max_batch_tokens set). For benchmarks that report a shape as not fitting instead of running it.
struct SlotPlan {
  int64_t capacity = 0;
  int64_t slots = 0;
  int64_t slot_bytes = 0;
  int64_t memory_slots = -1;
};
SlotPlan plan_slots(CausalLM& model, int64_t total_tokens, int64_t queued, const GenerateUntilOptions& options);

// Generation for every request through the scheduler of models/generation/requests_generate.cpp (decoding
// slots, continuous batching, CUDA graphs), the one generation engine; `on_done(i, answer)` is
// called for each finished request as it finishes. Returns the timings (prefill and decode wall
// time). The model must have decoding slots (CausalLM::has_slots) unless use_cache is false.
GenerateStats generate_until(CausalLM& model, const std::vector<GenerationRequest>& requests,
                             const GenerateUntilOptions& options,
                             const std::function<void(size_t, const GenerationAnswer&)>& on_done);

}  // namespace foxeval
