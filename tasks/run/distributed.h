// One command across processes: the c10d TCPStore rendezvous that torchrun (or srun/mpirun with
// MASTER_ADDR/MASTER_PORT) sets up, used by the Runner to hand out work, share what each rank
// finished and let rank 0 write the one result.
//
//   cli:    const ShardPlan plan = plan_shards("niah", num_shards_flag, shard_index_flag);
//           s.num_shards = plan.num_shards; s.shard_index = plan.shard_index; s.ranks = plan.ranks;
//           s.run.device = device_for_local_rank(s.run.device, plan.local_rank);
//   Runner: joins RunnerSettings::ranks when it runs with one shard (tasks/run/runner.cpp).
// The session is held by whoever runs the tasks (no process-wide one): a suite hands the same
// session to each of its tasks.
//
// torchrun's agent hosts the store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True): every
// worker is a client. Otherwise (srun, mpirun) rank 0 hosts it on MASTER_ADDR:MASTER_PORT.
// Environment (all optional):
//   FOXEVAL_DIST_TIMEOUT            seconds to reach the store, and for any one store wait (default 300)
//   FOXEVAL_HEARTBEAT_TIMEOUT       seconds without a heartbeat after which a rank counts as dead (default 60)
//   FOXEVAL_TEST_DIE_AFTER=N        test hook: the rank FOXEVAL_TEST_DIE_RANK (default 1) kills itself
//                                   (SIGKILL, no clean-up) right after journaling (saving) its N-th item
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace c10d {
class Store;
class TCPStore;
}  // namespace c10d

namespace foxeval {

// What the launcher says about this process (ranks from torchrun, SLURM tasks or Open MPI, as
// tasks/run/launcher_env.h reads them) and where its store is.
struct DistributedEnv {
  int64_t rank = 0, world = 1, local_rank = -1;
  std::string host;      // MASTER_ADDR ("" = not set)
  int port = 0;          // MASTER_PORT
  bool agent_store = false;  // torchrun's agent hosts the store
  std::string source;    // the launcher variables the ranks came from
  std::string attempt;   // TORCHELASTIC_RESTART_COUNT: a restarted group must not see old keys
};
DistributedEnv distributed_from_environment();

class DistributedSession;

// How a cli command splits its work. `ranks`: the launcher started world > 1 processes with a
// store address and no --num-shards was given: one run, one result (num_shards stays 1), its work
// shared through this session.
struct ShardPlan {
  int64_t num_shards = 1, shard_index = 0, local_rank = -1;
  std::shared_ptr<DistributedSession> ranks;
  // Rank 0 (or no distributed run): the process that writes the result and reports it.
  bool writes_result() const;
};

// For cli commands: flags are -1 when not given. Explicit --num-shards/--shard-index keep static
// shards (parts + `foxeval merge`). A distributed plan connects to the store now (so a rank that
// cannot reach it fails before loading a model, naming the address): the plan's `ranks`, which
// the Runner joins. Prints one line on stderr saying how the run is split.
ShardPlan plan_shards(const std::string& task, int64_t num_shards_flag, int64_t shard_index_flag);

// This process's connection to the store, with a heartbeat thread that watches the other ranks.
class DistributedSession {
 public:
  explicit DistributedSession(const DistributedEnv& env);
  ~DistributedSession();
  DistributedSession(const DistributedSession&) = delete;
  DistributedSession& operator=(const DistributedSession&) = delete;

  int64_t rank() const { return env_.rank; }
  int64_t world() const { return env_.world; }
  std::string address() const;

  // The key scope of the next run (Runner) of this process in the store, e.g. "run0/niah": each
  // run gets the next, the same on every rank (they run the same code).
  std::string next_run_scope(const std::string& task);

  // Keys are namespaced per run (`scope`, e.g. "run0/niah") by the caller.
  int64_t add(const std::string& key, int64_t delta);
  void set(const std::string& key, const std::string& value);
  // Waits for `key` (polling, so a dead rank or a lost store ends the wait with a clear Error).
  std::string get(const std::string& key);

  // Every rank posts `status` ("" = ok) under `name`; returns once all have, or throws the first
  // error another rank posted (so one rank's refusal stops all of them with its reason).
  void barrier(const std::string& name, const std::string& status);

  // Before leaving after the last exchange under `name` (also on an error): the other ranks say
  // they have read it, and rank 0 (which hosts the store under srun/mpirun) stays until every rank
  // not found dead has (at most 30 s), so its exit never takes the store from a rank still reading
  // the reason or the result.
  void leave(const std::string& name);

  // Why this run must stop ("" = it need not): a rank stopped heartbeating, or the store is gone.
  std::string fault() const;

  // Test hook FOXEVAL_TEST_DIE_AFTER: called after each journaled (saved) item.
  void after_item(int64_t items_done_here);
  // True on the rank the hook will kill: a reducer-mode run saves its state after every item there.
  bool test_hook_kills_this_rank() const { return die_after_ >= 0 && env_.rank == die_rank_; }
  // The same hook around a rank's first claim of work: the other ranks wait until the rank that is
  // to die has claimed, so it surely gets an item (a fast rank could otherwise take them all).
  void before_first_claim();
  void after_first_claim();

 private:
  DistributedEnv env_;
  std::shared_ptr<void> store_holder_;  // keeps the c10d::Store alive without exposing c10 headers
  c10d::Store* store_ = nullptr;
  std::shared_ptr<void> hb_holder_;     // the heartbeat thread's own client
  c10d::Store* hb_store_ = nullptr;
  std::chrono::milliseconds timeout_;
  double heartbeat_timeout_s_;
  int64_t die_after_ = -1, die_rank_ = 1;
  int64_t runs_ = 0;  // next_run_scope's count
  mutable std::mutex mu_;
  std::string fault_;
  std::set<int64_t> dead_;  // ranks the heartbeat found quiet for FOXEVAL_HEARTBEAT_TIMEOUT
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread heartbeat_;
  void heartbeat_loop();
  void set_fault(const std::string& why);
};

}  // namespace foxeval
