// header.pruning of a result: what FoX's adaptive computation pruning did in the run that made it.
//
// A run with pruning on (a FoX model with a log pruning tolerance) carries
//   header.pruning = {log_tolerance, key_blocks_skipped, key_blocks, skipped_fraction,
//                     decode_keys_skipped, decode_keys, decode_skipped_fraction, unit, counted}
// (the decode fields where the run decoded); a run with pruning off has no header.pruning. The
// counts come from the CUDA kernels (models/model.h PruningStats); shards and ranks add theirs up.
// The exact torch path (CPU, float32) never skips and counts nothing: key_blocks 0, fractions null.
#pragma once
#include <nlohmann/json.hpp>

#include "models/model.h"
#include "tasks/run/run_stats.h"

namespace foxeval {

// The counts a process's model made (CausalLM::pruning_stats, one device read), as a shard part or
// a rank carries them: {log_tolerance, key_blocks_skipped, key_blocks, decode_keys_skipped,
// decode_keys}; null when there is no model or its pruning is off.
nlohmann::json pruning_counts(const CausalLM* model);
nlohmann::json pruning_counts(const PruningStats& stats);

// From now on pruning_counts(model) counts from the model's present counts: a model loaded once and
// run by several tasks (foxeval suite) gives each task's header only that task's pruning.
void set_pruning_origin(const CausalLM* model);

// The sum of two such counts (null + x = x). Throws Error for counts that are not such an object
// (naming the field) or of other tolerances.
nlohmann::json add_pruning_counts(const nlohmann::json& a, const nlohmann::json& b);

// header.pruning from counts (non-null): the counts, the fractions skipped and what they count.
nlohmann::json pruning_header(const nlohmann::json& counts);

// The runner's source of header.pruning (RunnerSettings::stats): pruning_counts(model) read at the
// end of the run, summed over shards and ranks with add_pruning_counts, written with
// pruning_header. `model` may be null (no counts) and must outlive the runner.
RunStatsSource pruning_stats(const CausalLM* model);

}  // namespace foxeval
