// The one runner every record-based task uses (niah, longbench, lm-eval): work items with stable
// ids, a journal of finished records, resume, shards by rank, progress and one atomic final write.
//
//   Runner run(settings, "niah", identity, items);   // refuses a journal made with other settings
//   for (size_t i : run.todo()) {                     // this shard's items not yet in the journal
//     ... compute ...
//     run.finish(items[i].id, record, work);          // appended to the journal and flushed
//     if (run.should_stop()) run.interrupt();         // SIGINT/SIGTERM: throws RunInterrupted
//   }
//   nlohmann::json result = run.complete(build);      // writes the result (or a shard part)
//
// The result is built from the records in item order only, so the order work was done in,
// batching, shards and resume never change it. With num_shards > 1 each shard writes a part
// (`kind: foxeval-part`) and `foxeval merge` builds the same result with the task's builder.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "models/model.h"
#include "tasks/progress.h"
#include "tasks/stop_signals.h"

namespace foxeval {

class DistributedSession;  // tasks/distributed.h
class OutputLock;          // tasks/output_lock.h

struct WorkItem {
  std::string id;     // stable across runs: names the item in the journal (e.g. "len_1000_depth_50")
  double cost = 1.0;  // relative cost (e.g. tokens), for balancing shards
};

struct RunnerSettings {
  std::string out_path;      // the result (or this shard's part)
  bool resume = false;       // continue from out_path + ".journal.jsonl"
  int64_t num_shards = 1, shard_index = 0;
  std::string progress_unit = "tok";  // what `work` in finish() counts, for the rate
};

// Builds a task's result from its identity and every record in item order.
using ResultBuilder = std::function<nlohmann::json(const nlohmann::json& identity, const std::vector<nlohmann::json>& records)>;

// Thrown by Runner::interrupt(): the journal holds every finished item; `--resume` continues.
struct RunInterrupted : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The model part of every task's identity: where it came from (model_identity_path), its
// model_type and parameter count, and the options that change its numbers (adaptive computation
// pruning's tolerance, when on).
nlohmann::json model_identity(const std::string& model_dir, const ModelInfo& info);

class Runner {
 public:
  // `identity`: everything that changes a number (model, data digest, settings). A journal or a
  // shard part made with another identity is refused, naming the fields that differ.
  Runner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Indices (into items) of this shard's items that are not finished, in item order. In a
  // distributed run (tasks/distributed.h) this rank's static share (longest processing time
  // first) of the items no rank has finished yet.
  const std::vector<size_t>& todo() const { return todo_; }

  // The next item to do, or none when every item has been handed out: work handed out as it is
  // done, longest first (decreasing cost; ties in item order). In a distributed run a shared
  // counter in the store indexes every rank's unfinished items, so ranks take work as they free
  // up; in one process (or one static shard) it walks todo()'s items in that same order. Use
  // either todo() or claim() in a run, not both.
  std::optional<size_t> claim();
  // Up to n items at once (one step of the shared counter), consecutive in that longest-first
  // order, so items of similar cost stay together in one batch (e.g. the NIAH cells of one
  // length). Empty once every item has been handed out.
  std::vector<size_t> claim_batch(size_t n);
  bool done(const std::string& id) const { return records_.count(id) > 0; }

  // Records a finished item: appended to the journal and flushed before returning.
  void finish(const std::string& id, nlohmann::json record, double work = 1.0);

  // True once SIGINT/SIGTERM arrived (the runner catches them while it lives).
  bool should_stop() const;
  [[noreturn]] void interrupt() const;

  // Builds the result from the records (all items of this shard must be finished), adds the common
  // header (task, settings, elapsed, machine, foxeval version) and writes it atomically; or, with
  // several shards, writes this shard's part. Removes the journal. Returns what was written.
  nlohmann::json complete(const ResultBuilder& build);

  // False on the ranks of a distributed run other than rank 0: their complete() returns the result
  // rank 0 wrote, and the builder never runs there. Side outputs built from the records (e.g.
  // lm-eval's --log-samples) must be written only where this is true.
  bool writes_result() const;

  const std::vector<WorkItem>& items() const { return items_; }
  const nlohmann::json& identity() const { return identity_; }
  // OUT.journal.jsonl; in a distributed run each rank appends to OUT.journal.rank<R>.jsonl.
  std::string journal_path() const;
  double elapsed_seconds() const;  // this run plus what the journal's earlier runs took

 private:
  RunnerSettings settings_;
  std::string task_;
  nlohmann::json identity_;
  std::vector<WorkItem> items_;
  std::map<std::string, nlohmann::json> records_;  // finished, this shard's
  std::vector<size_t> todo_;
  std::FILE* journal_ = nullptr;
  double elapsed_before_ = 0;
  Progress progress_;
  int64_t done_count_ = 0, shard_total_ = 0;
  double work_ = 0;
  std::unique_ptr<OutputLock> lock_;  // OUT.lock while the run lives: a second run on the same --out is refused
  std::unique_ptr<StopSignals> signals_;  // set last in the constructor: SIGINT/SIGTERM -> should_stop()
  // A distributed run (see claim()): the session, this run's key scope in the store, the
  // unfinished items longest first (also what claim() walks in one process), and the records this
  // rank finished in this run.
  DistributedSession* dist_ = nullptr;
  std::string scope_;
  std::vector<size_t> claim_order_;
  size_t next_claim_ = 0;  // one process: the next index into claim_order_
  bool claimed_ = false;  // claim() was used: complete() checks the counter ran out, not todo()
  std::map<std::string, nlohmann::json> mine_;
  std::vector<std::string> other_journals_;  // read at the start, removed with ours at the end
  nlohmann::json complete_distributed(const ResultBuilder& build);
};

// Items of shard `index` of `num_shards`: items are dealt round-robin in decreasing cost, so every
// shard gets a similar share of long and short items. Returns indices into `items`, in item order.
std::vector<size_t> shard_items(const std::vector<WorkItem>& items, int64_t num_shards, int64_t index);

// The fields of `a` that differ in `b`, as "key: a vs b" strings (for refusals).
nlohmann::json diff_fields(const nlohmann::json& a, const nlohmann::json& b);

// Each task registers its builder so `foxeval merge` can combine its shard parts.
struct ResultBuilderRegistrar {
  ResultBuilderRegistrar(const std::string& task, ResultBuilder build);
};
const ResultBuilder* find_result_builder(const std::string& task);

// Combines the parts of a sharded task run (`kind: foxeval-part`) into the result one run gives.
nlohmann::json merge_task_parts(const std::vector<std::string>& parts, const std::string& out_path);

// The header every result file carries (issue 14 extends it): task, foxeval version, machine, date.
nlohmann::json result_header(const std::string& task, const nlohmann::json& identity, double elapsed_seconds);

// A digest of files for identities (FNV-1a 64 over names and bytes, hex). Folders: every regular
// file below, in code-point order of their relative paths.
std::string digest_paths(const std::vector<std::string>& paths);

}  // namespace foxeval
