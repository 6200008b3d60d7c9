// What every task's result file shares, and how the parts of a sharded run become one result.
//
// A task's result comes from one of two kinds of builder (both registered by the task, so that
// `foxeval merge` can finish a sharded run without the model):
//  * record mode (niah, longbench, lm-eval): a ResultBuilder over every item's record, in item order;
//  * reducer mode (loss): a Reducer, whose state is an exact, order-independent aggregate (loss's
//    fixed-point sums), so shards, ranks and resumed runs add up to the bits of one run.
// A static shard writes a part (`kind: foxeval-part`, below); merge_task_parts checks the parts
// against each other and builds the result one run gives, with the header every result carries.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace foxeval {

// Builds a task's result from its identity and every record in item order.
using ResultBuilder = std::function<nlohmann::json(const nlohmann::json& identity, const std::vector<nlohmann::json>& records)>;

// A reducer task's running aggregate: what its finished items added up to.
class ReducerState {
 public:
  virtual ~ReducerState() = default;
  // Serialised (state files, shard parts, the distributed store); Reducer::load reads it back.
  virtual nlohmann::json to_json() const = 0;
  // Adds another state (one item's contribution, a shard's, a rank's, an earlier run's). It must
  // be exact and order-independent: a merge of the same states in any order gives the same bits.
  virtual void merge(const ReducerState& other) = 0;
};

// Builds a reducer task's result from the state of all its items; elapsed_s: the run's time.
using ReducerFinish =
    std::function<nlohmann::json(const nlohmann::json& identity, const ReducerState& state, double elapsed_s)>;

struct Reducer {
  // An empty state (saved == nullptr), or the one `saved` (a to_json()) holds. Throws
  // foxeval::Error for a state that does not fit `identity` (the caller names the file).
  std::function<std::unique_ptr<ReducerState>(const nlohmann::json& identity, const nlohmann::json* saved)> load;
  ReducerFinish finish;  // what `foxeval merge` uses; a live run may pass its own to Runner::complete
};

// Each task registers its builder (record mode) or reducer so `foxeval merge` can combine its parts.
struct ResultBuilderRegistrar {
  ResultBuilderRegistrar(const std::string& task, ResultBuilder build);
};
struct ReducerRegistrar {
  ReducerRegistrar(const std::string& task, Reducer reducer);
};
const ResultBuilder* find_result_builder(const std::string& task);
const Reducer* find_reducer(const std::string& task);

// The part a static shard writes (`foxeval merge` input): {kind: foxeval-part, task, identity (the
// task's own: one run's but for a num_shards it may hold), num_shards, shard_index, items (every item
// id of the run, in item order), elapsed_s} plus what the shard finished: `payload` is
// {"records": {id: record}} in record mode, {"done": [id...], "state": reducer state} in reducer mode.
nlohmann::json task_part(const std::string& task, const nlohmann::json& identity, int64_t num_shards, int64_t shard_index,
                         const std::vector<std::string>& items, const nlohmann::json& payload, double elapsed_s);

// Combines the parts of a sharded task run into the result one run gives, written atomically to
// out_path. Refuses parts of other settings, a shard given twice or missing, an item in no part.
nlohmann::json merge_task_parts(const std::vector<std::string>& parts, const std::string& out_path);

// The most GPU memory this process held at once on `device` (a --device value), for results'
// peak_gpu_memory_bytes; none on the CPU.
std::optional<int64_t> peak_gpu_memory_bytes(const std::string& device);

// The header every result file carries: task, settings (the identity), foxeval version, machine,
// date, elapsed time, and the hub repo/revision of a model from the Hugging Face cache.
nlohmann::json result_header(const std::string& task, const nlohmann::json& identity, double elapsed_seconds);

// The fields of `a` that differ in `b`, as "key: a vs b" strings (for refusals).
nlohmann::json diff_fields(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace foxeval
