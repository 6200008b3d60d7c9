// The loop of every generation task (niah, longbench, babilong, ruler) over its RecordRunner: claim
// a batch of items (Runner::claim_batch: longest first; in a distributed run from the shared counter,
// so no GPU idles while another works through the long prompts), build their requests, answer them
// through the one generation engine (models/requests.h generate_until, by capacity bucket through
// its decoding slots) and journal each item's record as its answer comes. An item's answer depends
// on its prompt and its bucket's slot count only, never on its batch, order or rank.
// Progress (requests, tokens, rates, ETA) goes to stderr through a GenerationMeter; a stop signal is
// honoured within a decode run, not only when a request finishes (one may take minutes): what is
// journaled is kept, the requests in flight are redone on --resume.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "models/model.h"
#include "models/requests.h"
#include "tasks/run/run_stats.h"
#include "tasks/run/runner.h"

namespace foxeval {

// What this process's loop generated: the requests it answered, their new tokens, the engine's
// timings. Its RunStatsSource (generation_stats) makes header.generation of the result.
struct GenerationTotals {
  GenerateStats stats;
  int64_t requests = 0, new_tokens = 0;
};

struct GenerationLoop {
  // A task's loop with its generation options, its --stop-after and the device its model runs on
  // (`device`, as RunOptions::device): 4 x --batch-size items a batch (generation_batch).
  GenerationLoop(std::string task, GenerateUntilOptions generation, int64_t stop_after, const std::string& device);

  std::string task;     // progress lines' name, e.g. "longbench"
  std::string unit = "requests";  // what an item is called there, e.g. "records", "cells"
  std::string shorten;  // the flags that shorten the run (the CPU warning)
  size_t per_batch = 1;  // items claimed and handed to the scheduler together
  int64_t stop_after = -1;  // >= 0: stop (as if interrupted, resumable) after this many items finish
  GenerateUntilOptions generation;
  bool cpu = false;  // the model runs on the CPU (the meter warns of a long run there)
  GenerationTotals totals;  // what run_generation_loop generated, added up
};

// What one item contributes to the meter's bound before its request is built: its prompt tokens
// (an estimate where prompts are tokenized when claimed) and its max_new_tokens.
struct OpenTokens {
  int64_t prompt = 0, max_new = 0;
};


// header.generation, summed over shards and ranks (`foxeval merge` too): {requests, prompt_tokens,
// new_tokens, decode_steps, prefill_s, decode_s, prefill_tokens_per_s, decode_tokens_per_s, counted}.
// The seconds are each process's, added up, so a rate is per process (per GPU), not the run's
// wall-clock throughput; items an earlier, resumed run finished are not counted. `totals` must
// outlive the runner (its counts are read at complete()).
RunStatsSource generation_stats(const GenerationTotals* totals);

// `rs` with header.generation of `loop`'s totals among its statistics: the runner a generation task
// makes before its loop (the loop must outlive the runner).
RunnerSettings with_generation_stats(RunnerSettings rs, const GenerationLoop& loop);

// Runs the loop until the runner's items are all claimed or it stops. `request(i)`: item i's request
// (built when claimed); `record(i, request, answer)`: its record, journaled with work = prompt +
// answer tokens. What it generated is added to loop.totals.
void run_generation_loop(
    RecordRunner& runner, CausalLM& model, GenerationLoop& loop, const std::function<OpenTokens(size_t)>& open,
    const std::function<GenerationRequest(size_t)>& request,
    const std::function<nlohmann::json(size_t, const GenerationRequest&, const GenerationAnswer&)>& record);

// The batch size the long-context generation tasks claim: 4 x --batch-size items. Consecutive items
// of the longest-first order fall in one or two capacity buckets, so a bucket has a few requests per
// slot and its slots stay busy (continuous batching) until its last rows drain; a larger batch
// would only lengthen the tail, when one rank works through its last batch while the others have
// nothing left (the last batches hold the cheapest items).
size_t generation_batch(const GenerateUntilOptions& generation);

// HFLM's tok_batch_encode(left_truncate_len = max_length - max_gen_toks), as lm-eval truncates a
// generation prompt: the end is kept (BOS only if it fits). True when `ids` was cut; max_length 0
// or less: no limit.
bool hflm_left_truncate(std::vector<int64_t>& ids, int64_t max_length, int64_t max_gen_toks);

}  // namespace foxeval
