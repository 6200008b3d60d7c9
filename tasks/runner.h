// The one runner every task uses: work items with stable ids, what is finished persisted as it
// goes, resume, static shards (parts for `foxeval merge`), ranks of a distributed run, progress,
// SIGINT/SIGTERM as a saved stop (RunInterrupted, exit 3), one lock per output and one atomic
// final write. Two modes, by what a task's result is made of:
//
//   Record mode (niah, longbench, lm-eval): one record per item, journaled as it finishes.
//     Runner run(settings, "niah", identity, items);   // refuses a journal made with other settings
//     while (auto i = run.claim()) {                    // this shard's/rank's open items, longest first
//       run.finish(items[*i].id, record, work);         // appended to OUT.journal.jsonl and flushed
//       if (run.should_stop()) run.interrupt();         // SIGINT/SIGTERM: throws RunInterrupted
//     }
//     nlohmann::json result = run.complete(build);      // build(identity, records in item order)
//
//   Reducer mode (loss): one exact, order-independent state (result_file.h's Reducer) that each
//   item adds its contribution to; saved with the ids it holds to OUT.state.json every
//   save_every_seconds and on a stop.
//     Runner run(settings, "loss", identity, items, reducer);
//     while (auto i = run.claim()) { ...; run.finish(items[*i].id, contribution, work); }
//     nlohmann::json result = run.complete(finish);     // finish(identity, all items' state, elapsed)
//
// The result never depends on the order work was done in, batching, shards, ranks or resume:
// records are built in item order, states merge exactly. With num_shards > 1 each shard writes a
// part (`kind: foxeval-part`) and `foxeval merge` builds the same result with the task's
// registered builder or reducer (tasks/result_file.h).
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/model.h"
#include "tasks/identity.h"  // model_identity, digest_paths: every task builds its identity with them
#include "tasks/progress.h"
#include "tasks/result_file.h"
#include "tasks/stop_signals.h"

namespace foxeval {

class DistributedSession;  // tasks/distributed.h
class OutputLock;          // tasks/output_lock.h

struct WorkItem {
  std::string id;     // stable across runs: names the item in the journal (e.g. "len_1000_depth_50")
  double cost = 1.0;  // relative cost (e.g. tokens), for balancing shards
};

// Tasks fill the first four fields positionally (RunnerSettings{out, resume, shards, index}):
// keep their order.
struct RunnerSettings {
  std::string out_path;      // the result (or this shard's part)
  bool resume = false;       // continue from the journals (states) beside out_path (journal_path())
  int64_t num_shards = 1, shard_index = 0;
  std::string progress_unit = "tok";  // what `work` in finish() counts, for the rate
  // Reducer mode: seconds between saves of the state (record mode journals every item at once).
  double save_every_seconds = 120.0;
  // The model the task runs, where it has one: its adaptive-pruning counts (CausalLM::pruning_stats,
  // read once at complete()) go into the result's header.pruning, summed over shards and ranks.
  const CausalLM* model = nullptr;
};

// Thrown by Runner::interrupt(): the journal (or the saved state) holds every finished item;
// `--resume` continues.
struct RunInterrupted : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Runner {
 public:
  // `identity`: everything that changes a number (model, data digest, settings). A journal, state
  // or shard part made with another identity is refused, naming the fields that differ.
  // Record mode:
  Runner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items);
  // Reducer mode: `reducer.load` makes the empty state and reads saved ones back.
  Runner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items, Reducer reducer);
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
  // Finished, by this or (read at the start) an earlier run or another rank.
  bool done(const std::string& id) const { return finished_.count(id) > 0; }

  // Record mode: records a finished item: appended to the journal and flushed before returning.
  void finish(const std::string& id, nlohmann::json record, double work = 1.0);
  // Reducer mode: adds a finished item's contribution (a state of that item alone) to this run's
  // state; the state and its items are saved every save_every_seconds and on interrupt().
  void finish(const std::string& id, const ReducerState& contribution, double work = 1.0);

  // True once SIGINT/SIGTERM arrived (the runner catches them while it lives), or a rank of a
  // distributed run died.
  bool should_stop() const;
  // Makes what is finished safe (the journal synced, or the state saved) and throws RunInterrupted.
  [[noreturn]] void interrupt() const;

  // Builds the result (all items of this shard must be finished), adds the common header (task,
  // settings, elapsed, machine, foxeval version) and writes it atomically; or, with several
  // shards, writes this shard's part. Removes the journals (states). Returns what was written.
  nlohmann::json complete(const ResultBuilder& build);   // record mode: build(identity, records in item order)
  nlohmann::json complete(const ReducerFinish& finish);  // reducer mode: finish(identity, every item's state, elapsed)

  // False on the ranks of a distributed run other than rank 0: their complete() returns the result
  // rank 0 wrote, and the builder never runs there. Side outputs built from the records (e.g.
  // lm-eval's --log-samples) must be written only where this is true.
  bool writes_result() const;
  // One of the ranks of a distributed run (tasks/distributed.h): claim() takes from a shared counter.
  bool distributed() const { return dist_ != nullptr; }

  const std::vector<WorkItem>& items() const { return items_; }
  const nlohmann::json& identity() const { return identity_; }
  // Where this process keeps what it finished: record mode OUT.journal.jsonl (in a distributed run
  // each rank appends to OUT.journal.rank<R>.jsonl), reducer mode OUT.state.json (OUT.state.rank<R>.json).
  std::string journal_path() const;
  double elapsed_seconds() const;  // this run plus what the journal's earlier runs took

 private:
  Runner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items,
         std::optional<Reducer> reducer);
  RunnerSettings settings_;
  std::string task_;
  nlohmann::json identity_;       // as the journal/state holds it: the task's, plus num_shards of a static shard
  nlohmann::json task_identity_;  // as the task gave it (what a shard part carries)
  std::vector<WorkItem> items_;
  std::set<std::string> item_ids_;
  std::set<std::string> finished_;  // every item known finished (this run, journals/states read, not other ranks' this run)
  std::map<std::string, nlohmann::json> records_;  // record mode: finished, this shard's
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
  int64_t finished_here_ = 0;  // items this process finished in this run
  std::vector<std::string> other_journals_;  // read at the start, removed with ours at the end
  // Reducer mode. Each state file holds exactly the items its state adds up: this process
  // continues its own (state_, own_done_); the files no current rank continues (an earlier run's
  // other ranks, or the one-process state in a distributed run) are carried to the end by the
  // process that writes the result (carried_, carried_done_).
  std::optional<Reducer> reducer_;
  std::unique_ptr<ReducerState> state_, carried_;
  std::vector<std::string> own_done_, carried_done_;
  mutable std::chrono::steady_clock::time_point last_save_;
  void save_state() const;
  void after_finish(const std::string& id, double work);
  void check_finished() const;
  // This shard's part file content (--num-shards > 1): the payload with the model's pruning
  // counts, under the shard's header and item ids.
  nlohmann::json shard_part(nlohmann::json payload, double elapsed) const;
  // The exchange at the end of a distributed run: every rank posts `mine`; rank 0 gets the other
  // ranks' posts, builds and writes the result with `build_all` and hands it to every rank.
  nlohmann::json complete_distributed(
      const nlohmann::json& mine,
      const std::function<nlohmann::json(const std::vector<nlohmann::json>& others, double elapsed)>& build_all);
};

// Items of shard `index` of `num_shards`: items are dealt round-robin in decreasing cost, so every
// shard gets a similar share of long and short items. Returns indices into `items`, in item order.
std::vector<size_t> shard_items(const std::vector<WorkItem>& items, int64_t num_shards, int64_t index);

}  // namespace foxeval
