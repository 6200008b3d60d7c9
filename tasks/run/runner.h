// The one runner every task uses: work items with stable ids, what is finished persisted as it
// goes, resume, static shards (parts for `foxeval merge`), ranks of a distributed run, progress,
// SIGINT/SIGTERM as a saved stop (RunInterrupted, exit 3), one lock per output and one atomic
// final write. It knows no model: what a run measured beside its records (FoX's pruning counts)
// reaches it through RunnerSettings::stats. One core (RunnerCore), two modes, by what a task's
// result is made of; each mode is its own type, so a record task cannot finish with a state, nor a
// reducer task with a record (a compile error, not a runtime check):
//
//   Record mode (niah, longbench, lm-eval): one record per item, journaled as it finishes.
//     RunnerSettings rs;                                // every field set by name
//     rs.out_path = s.out_path;
//     rs.resume = s.resume;
//     rs.num_shards = s.num_shards;
//     rs.shard_index = s.shard_index;
//     rs.ranks = s.ranks;                               // the distributed run's session, or null
//     rs.stats = {pruning_stats(model)};                // header.pruning (tasks/run/pruning_header.h)
//     RecordRunner run(rs, "niah", identity, items);    // refuses a journal made with other settings
//     while (auto i = run.claim()) {                    // this shard's/rank's open items, longest first
//       run.finish(items[*i].id, record, work);         // appended to OUT.journal.jsonl and flushed
//       if (run.should_stop()) run.interrupt();         // SIGINT/SIGTERM: throws RunInterrupted
//     }
//     nlohmann::json result = run.complete(build);      // build(identity, records in item order)
//
//   Reducer mode (loss): one exact, order-independent state (result_file.h's Reducer) that each
//   item adds its contribution to; saved with the ids it holds to OUT.state.json every
//   save_every_seconds and on a stop.
//     ReducerRunner run(rs, "loss", identity, items, reducer);
//     while (auto i = run.claim()) { ...; run.finish(items[*i].id, contribution, work); }
//     nlohmann::json result = run.complete(finish);     // finish(identity, all items' state, elapsed)
//
// The result never depends on the order work was done in, batching, shards, ranks or resume:
// records are built in item order, states merge exactly. With num_shards > 1 each shard writes a
// part (`kind: foxeval-part`) and `foxeval merge` builds the same result with the task's
// registered builder or reducer (tasks/run/result_file.h).
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

#include "tasks/run/progress.h"
#include "tasks/run/result_file.h"
#include "tasks/run/run_ranks.h"
#include "tasks/run/run_stats.h"
#include "tasks/run/stop_signals.h"

namespace foxeval {

class DistributedSession;  // tasks/run/distributed.h
class OutputLock;          // tasks/run/output_lock.h

struct WorkItem {
  std::string id;     // stable across runs: names the item in the journal (e.g. "len_1000_depth_50")
  double cost = 1.0;  // relative cost (e.g. tokens), for balancing shards
};

// Set by name, one field at a time (the explicit constructor refuses positional `{out, ...}` at
// compile time: a field added or moved never shifts another's value).
struct RunnerSettings {
  explicit RunnerSettings() = default;
  std::string out_path;      // the result (or this shard's part)
  bool resume = false;       // continue from the journals (states) beside out_path (journal_path())
  // Static shards: shard_index of num_shards, each writing a part for `foxeval merge`.
  int64_t num_shards = 1, shard_index = 0;
  // The ranks of one distributed run (tasks/run/distributed.h plan_shards; null: one process). Used
  // with num_shards 1 only: the ranks share the run's work through the session's store.
  RunRanks ranks;
  std::string progress_unit = "tok";  // what `work` in finish() counts, for the rate
  // Reducer mode: seconds between saves of the state (record mode journals every item at once).
  double save_every_seconds = 120.0;
  std::vector<RunStatsSource> stats;  // header.<name> of each, summed over shards and ranks
};

// Thrown by RunnerCore::interrupt(): the journal (or the saved state) holds every finished item;
// `--resume` continues.
struct RunInterrupted : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What both modes share: items, claims, journals or states, resume, shards, ranks, stop, the
// final write. Made only as a RecordRunner or a ReducerRunner (below).
class RunnerCore {
 public:
  ~RunnerCore();
  RunnerCore(const RunnerCore&) = delete;
  RunnerCore& operator=(const RunnerCore&) = delete;

  // Indices (into items) of this shard's items that are not finished, in item order. In a
  // distributed run (tasks/run/distributed.h) this rank's static share (longest processing time
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

  // True once SIGINT/SIGTERM arrived (the runner catches them while it lives), or a rank of a
  // distributed run died.
  bool should_stop() const;
  // Makes what is finished safe (the journal synced, or the state saved) and throws RunInterrupted.
  [[noreturn]] void interrupt() const;

  // False on the ranks of a distributed run other than rank 0: their complete() returns the result
  // rank 0 wrote, and the builder never runs there. Side outputs built from the records (e.g.
  // lm-eval's --log-samples) must be written only where this is true.
  bool writes_result() const;
  // One of the ranks of a distributed run (tasks/run/distributed.h): claim() takes from a shared counter.
  bool distributed() const { return dist_ != nullptr; }
  // This process's rank in a distributed run, -1 in one that is not; the number of ranks (1 then).
  int64_t rank() const;
  int64_t world() const;

  const std::vector<WorkItem>& items() const { return items_; }
  const nlohmann::json& identity() const { return identity_; }
  // Where this process keeps what it finished: record mode OUT.journal.jsonl (in a distributed run
  // each rank appends to OUT.journal.rank<R>.jsonl), reducer mode OUT.state.json (OUT.state.rank<R>.json).
  std::string journal_path() const;
  double elapsed_seconds() const;  // this run plus what the journal's earlier runs took

 protected:
  // `identity`: everything that changes a number (model, data digest, settings). A journal, state
  // or shard part made with another identity is refused, naming the fields that differ. A reducer
  // makes reducer mode: `reducer.load` makes the empty state and reads saved ones back.
  RunnerCore(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items,
             std::optional<Reducer> reducer);
  // The modes' finish and complete (RecordRunner, ReducerRunner say what they do).
  void finish_record(const std::string& id, nlohmann::json record, double work);
  void finish_state(const std::string& id, const ReducerState& contribution, double work);
  nlohmann::json complete_records(const ResultBuilder& build);
  nlohmann::json complete_reduced(const ReducerFinish& finish);

 private:
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
  DistributedSession* dist_ = nullptr;  // settings_.ranks, when the run is shared by ranks
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
  // This process's counts of each settings_.stats source, under its name (absent when null).
  nlohmann::json stats_counts() const;
  nlohmann::json with_stats(nlohmann::json payload) const;  // a rank's post: the payload and stats_counts()
  // header.<name> of each source from the counts of every process (`posts`: each holds them under the names).
  void add_stats_header(nlohmann::json& header, const std::vector<nlohmann::json>& posts) const;
  // This shard's part file content (--num-shards > 1): the payload with this process's stats
  // counts (stats_counts()), under the shard's header and item ids.
  nlohmann::json shard_part(nlohmann::json payload, double elapsed) const;
  // The exchange at the end of a distributed run: every rank posts `mine`; rank 0 gets the other
  // ranks' posts, builds and writes the result with `build_all` and hands it to every rank.
  nlohmann::json complete_distributed(
      const nlohmann::json& mine,
      const std::function<nlohmann::json(const std::vector<nlohmann::json>& others, double elapsed)>& build_all);
};

// Record mode: one record per item (journaled), the result built from them in item order.
class RecordRunner : public RunnerCore {
 public:
  RecordRunner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items)
      : RunnerCore(std::move(settings), std::move(task), std::move(identity), std::move(items), std::nullopt) {}
  // Records a finished item: appended to the journal and flushed before returning.
  void finish(const std::string& id, nlohmann::json record, double work = 1.0) { finish_record(id, std::move(record), work); }
  // Builds the result (all items of this shard must be finished) with build(identity, records in
  // item order), adds the common header (task, settings, elapsed, machine, foxeval version, the
  // stats) and writes it atomically; or, with several shards, writes this shard's part. Removes the
  // journals. Returns what was written.
  nlohmann::json complete(const ResultBuilder& build) { return complete_records(build); }
};

// Reducer mode: one exact, order-independent state each item adds its contribution to.
class ReducerRunner : public RunnerCore {
 public:
  ReducerRunner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items,
                Reducer reducer)
      : RunnerCore(std::move(settings), std::move(task), std::move(identity), std::move(items),
                   std::optional<Reducer>(std::move(reducer))) {}
  // Adds a finished item's contribution (a state of that item alone) to this run's state; the
  // state and its items are saved every save_every_seconds and on interrupt().
  void finish(const std::string& id, const ReducerState& contribution, double work = 1.0) {
    finish_state(id, contribution, work);
  }
  // As RecordRunner::complete, with finish(identity, every item's state, elapsed); removes the states.
  nlohmann::json complete(const ReducerFinish& finish) { return complete_reduced(finish); }
};

// Items of shard `index` of `num_shards`: items are dealt round-robin in decreasing cost, so every
// shard gets a similar share of long and short items. Returns indices into `items`, in item order.
std::vector<size_t> shard_items(const std::vector<WorkItem>& items, int64_t num_shards, int64_t index);

}  // namespace foxeval
