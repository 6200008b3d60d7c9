#include "tasks/run/distributed.h"

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <c10/util/Logging.h>

#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "data/errors.h"
#include "tasks/run/launcher_env.h"

namespace foxeval {
namespace {

using Clock = std::chrono::steady_clock;
using StorePtr = c10::intrusive_ptr<c10d::Store>;

double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  // At most a week: a timeout past that is no timeout, and an infinite one overflows the milliseconds.
  if (end == v || *end != '\0' || !(x > 0) || !(x <= 7 * 86400.0))
    throw Error(fmt::format("environment variable {}={} is not allowed: must be a number of seconds in (0, 604800]", name,
                            std::string(v).substr(0, 40)));
  return x;
}

int64_t env_int_or(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || errno == ERANGE || x < -1 || x > (int64_t(1) << 40))
    throw Error(fmt::format("environment variable {}={} is not allowed: must be an integer in [-1, 2^40]", name,
                            std::string(v).substr(0, 40)));
  return x;
}

// c10's messages carry a C++ backtrace: ours name the rank and address instead.
std::string short_what(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

std::vector<uint8_t> bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

// Runs `work` on a thread of its own and waits for it at most `limit`; then throws Error(late()).
// The thread is left behind on a timeout (it blocks on a socket and owns all it uses, nothing of
// the caller's), and the process ends with the refusal.
template <typename T>
T within_deadline(std::function<T()> work, std::chrono::milliseconds limit, const std::function<std::string()>& late) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::optional<T> value;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, work = std::move(work)] {
    std::optional<T> value;
    std::exception_ptr error;
    try {
      value.emplace(work());
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(shared->mu);
    shared->value = std::move(value);
    shared->error = error;
    shared->done = true;
    shared->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(shared->mu);
  if (!shared->cv.wait_for(lock, limit, [&] { return shared->done; })) throw Error(late());
  if (shared->error) std::rethrow_exception(shared->error);
  return std::move(*shared->value);
}

struct Connected {
  StorePtr base, heartbeat;  // the run's client and the heartbeat thread's own
};

// Connects to (or hosts) the store and signs in. Two jobs on one MASTER_PORT: the second job's
// ranks reach the first job's store. Each rank signs in under its number first: a number already
// signed in is another job's, told at once (before this rank writes anything the other job reads).
Connected connect_store(const DistributedEnv& env, const c10d::TCPStoreOptions& o, const std::string& address,
                        const std::string& prefix) {
  const bool host_it = o.isServer;
  const std::string hosted_by = env.agent_store ? ", hosted by torchrun's agent" : host_it ? "" : ", hosted by rank 0";
  const auto seconds = o.timeout.count() / 1000;
  Connected out;
  try {
    out.base = c10::make_intrusive<c10d::TCPStore>(env.host, o);
  } catch (const c10::Error& e) {
    const std::string why = e.what_without_backtrace();
    throw Error(fmt::format("rank {}: cannot {} the rendezvous store at {} (MASTER_ADDR/MASTER_PORT{}) within {} s: {}{}",
                            env.rank, host_it ? "host" : "reach", address, hosted_by, seconds,
                            why.substr(0, why.find('\n')),
                            why.find("EADDRINUSE") != std::string::npos || why.find("in use") != std::string::npos
                                ? fmt::format(" (is another job using MASTER_PORT={}? give each job its own)", env.port)
                                : ""));
  } catch (const std::exception& e) {
    throw Error(fmt::format("rank {}: cannot {} the rendezvous store at {} (MASTER_ADDR/MASTER_PORT{}) within {} s: {}",
                            env.rank, host_it ? "host" : "reach", address, hosted_by, seconds, short_what(e)));
  }
  try {
    const int64_t signed_in = out.base->add(fmt::format("{}/signed_in/{}", prefix, env.rank), 1);
    const std::vector<uint8_t> world_bytes = bytes(std::to_string(env.world));
    const std::string world_key = fmt::format("{}/world", prefix);
    const std::string their_world = text(out.base->compareSet(world_key, {}, world_bytes));
    if (signed_in > 1 || their_world != std::to_string(env.world))
      throw Error(fmt::format("rank {}: the rendezvous store at {} already has {} (MASTER_ADDR/MASTER_PORT): another job "
                              "uses MASTER_PORT={}; give each job its own port",
                              env.rank, address,
                              signed_in > 1 ? fmt::format("a rank {}", env.rank)
                                            : fmt::format("a job of {} ranks, this one has {}", their_world, env.world),
                              env.port));
    out.heartbeat = out.base->clone();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("rank {}: the rendezvous store at {} failed: {}", env.rank, address, short_what(e)));
  }
  return out;
}


}  // namespace

DistributedEnv distributed_from_environment() {
  DistributedEnv e;
  const LauncherShard s = shard_from_environment();
  // SLURM job arrays run their tasks at different times: never one distributed run.
  if (s.source.empty() || s.source.rfind("SLURM_ARRAY", 0) == 0) return e;
  e.rank = s.shard_index;
  e.world = s.num_shards;
  e.local_rank = s.local_rank;
  e.source = s.source;
  if (const char* a = std::getenv("MASTER_ADDR")) e.host = a;
  const int64_t port = env_int_or("MASTER_PORT", 0);
  if (!e.host.empty() && (port < 1 || port > 65535))
    throw Error(fmt::format("MASTER_PORT={} must be a port number in 1..65535", port));
  e.port = static_cast<int>(port);
  const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  e.agent_store = agent && (std::string(agent) == "True" || std::string(agent) == "true" || std::string(agent) == "1");
  if (const char* r = std::getenv("TORCHELASTIC_RESTART_COUNT")) e.attempt = r;
  return e;
}

ShardPlan plan_shards(const std::string& task, int64_t num_shards_flag, int64_t shard_index_flag) {
  const LauncherShard env = shard_from_environment();
  ShardPlan p;
  p.local_rank = env.local_rank;
  if (num_shards_flag >= 0 || shard_index_flag >= 0) {  // explicit static shards (array jobs)
    p.num_shards = num_shards_flag >= 0 ? num_shards_flag : env.num_shards;
    p.shard_index = shard_index_flag >= 0 ? shard_index_flag : env.shard_index;
    return p;
  }
  const DistributedEnv d = distributed_from_environment();
  if (d.world > 1 && !d.host.empty() && d.port > 0) {
    p.ranks = std::make_shared<DistributedSession>(d);
    std::fprintf(stderr, "[%s] rank %lld of %lld (from %s): one run, work shared through the store at %s\n", task.c_str(),
                 static_cast<long long>(d.rank), static_cast<long long>(d.world), d.source.c_str(),
                 p.ranks->address().c_str());
    return p;
  }
  p.num_shards = env.num_shards;
  p.shard_index = env.shard_index;
  if (!env.source.empty())
    std::fprintf(stderr, "[%s] shard %lld of %lld (from %s%s): writes a part for `foxeval merge`\n", task.c_str(),
                 static_cast<long long>(p.shard_index), static_cast<long long>(p.num_shards), env.source.c_str(),
                 env.num_shards > 1 && d.host.empty() && !d.source.empty() ? "; no MASTER_ADDR/MASTER_PORT, so no shared run" : "");
  return p;
}

bool ShardPlan::writes_result() const { return !ranks || ranks->rank() == 0; }

std::string DistributedSession::next_run_scope(const std::string& task) { return fmt::format("run{}/{}", runs_++, task); }

std::string DistributedSession::address() const { return fmt::format("{}:{}", env_.host, env_.port); }

DistributedSession::DistributedSession(const DistributedEnv& env)
    : env_(env),
      timeout_(static_cast<int64_t>(env_seconds("FOXEVAL_DIST_TIMEOUT", 300) * 1000)),
      heartbeat_timeout_s_(env_seconds("FOXEVAL_HEARTBEAT_TIMEOUT", 60)),
      die_after_(env_int_or("FOXEVAL_TEST_DIE_AFTER", -1)),
      die_rank_(env_int_or("FOXEVAL_TEST_DIE_RANK", 1)) {
  const bool host_it = !env_.agent_store && env_.rank == 0;
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env_.port);
  o.isServer = host_it;
  o.numWorkers = std::nullopt;
  o.waitWorkers = false;
  o.timeout = timeout_;
  const std::string prefix = fmt::format("foxeval/{}", env_.attempt.empty() ? "0" : env_.attempt);
  // Connecting, signing in and the heartbeat's second client, on a thread of their own under one
  // deadline: a peer at MASTER_PORT that accepts and never answers (another program, a hung store)
  // blocks TCPStore's reads for ever (they have no timeout before its first wait). TCPStore's own
  // connect timeout is FOXEVAL_DIST_TIMEOUT too; this one, a second later, is the backstop.
  // TCPStore logs each failed try (as a warning, the last as an error) with a C++ backtrace; the
  // refusal below names the reason once. Unless the user set c10's level (TORCH_CPP_LOG_LEVEL):
  // fatal messages only, from here on.
  if (!std::getenv("TORCH_CPP_LOG_LEVEL")) FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, 3);
  const std::string where = address();
  const DistributedEnv env_copy = env_;
  const Connected c = within_deadline<Connected>(
      [env_copy, o, where, prefix] { return connect_store(env_copy, o, where, prefix); }, timeout_ + std::chrono::seconds(1),
      [&] {
        return fmt::format("rank {}: cannot {} the rendezvous store at {} (MASTER_ADDR/MASTER_PORT{}) within {} s "
                           "(FOXEVAL_DIST_TIMEOUT): it does not answer; is something other than this job's store "
                           "listening on MASTER_PORT={}?",
                           env_.rank, host_it ? "host" : "reach", where,
                           env_.agent_store ? ", hosted by torchrun's agent" : host_it ? "" : ", hosted by rank 0",
                           timeout_.count() / 1000, env_.port);
      });
  StorePtr base = c.base;
  auto store = c10::make_intrusive<c10d::PrefixStore>(prefix, base);
  auto hb = c10::make_intrusive<c10d::PrefixStore>(prefix, c.heartbeat);
  store_ = store.get();
  hb_store_ = hb.get();
  store_holder_ = std::make_shared<StorePtr>(store);
  hb_holder_ = std::make_shared<StorePtr>(hb);
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
}

DistributedSession::~DistributedSession() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

void DistributedSession::set_fault(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fault_.empty()) fault_ = why;
}

std::string DistributedSession::fault() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fault_;
}

// Every second: bump our counter, read everyone else's. A counter that has not moved for
// FOXEVAL_HEARTBEAT_TIMEOUT seconds means its rank died (srun/mpirun do not always stop the
// others; torchrun does, with SIGTERM, which the Runner turns into a saved stop as well).
void DistributedSession::heartbeat_loop() {
  std::map<int64_t, std::pair<int64_t, Clock::time_point>> seen;
  const Clock::time_point start = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    try {
      hb_store_->add(fmt::format("hb/{}", env_.rank), 1);
      for (int64_t r = 0; r < env_.world; ++r) {
        if (r == env_.rank) continue;
        const int64_t v = hb_store_->add(fmt::format("hb/{}", r), 0);
        auto it = seen.find(r);
        if (it == seen.end()) it = seen.emplace(r, std::make_pair(v, start)).first;
        if (v != it->second.first) it->second = {v, Clock::now()};
        const double quiet = std::chrono::duration<double>(Clock::now() - it->second.second).count();
        if (quiet > heartbeat_timeout_s_) {
          {
            std::lock_guard<std::mutex> dead_lock(mu_);
            dead_.insert(r);
          }
          if (hb_store_->add("exited", 0) == 0)
            set_fault(fmt::format("rank {} sent no heartbeat for {:.0f} s (FOXEVAL_HEARTBEAT_TIMEOUT): it died or hangs", r, quiet));
        }
      }
    } catch (const std::exception& e) {
      set_fault(fmt::format("lost the rendezvous store at {}{}: {}", address(),
                            env_.agent_store ? " (torchrun's agent)" : " (hosted by rank 0: did rank 0 die?)", short_what(e)));
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
  }
}

int64_t DistributedSession::add(const std::string& key, int64_t delta) {
  try {
    return store_->add(key, delta);
  } catch (const std::exception& e) {
    throw Error(fmt::format("rank {}: the rendezvous store at {} failed ({}): {}", env_.rank, address(), key, short_what(e)));
  }
}

void DistributedSession::set(const std::string& key, const std::string& value) {
  try {
    store_->set(key, bytes(value));
  } catch (const std::exception& e) {
    throw Error(fmt::format("rank {}: the rendezvous store at {} failed ({}): {}", env_.rank, address(), key, short_what(e)));
  }
}

std::string DistributedSession::get(const std::string& key) {
  const Clock::time_point deadline = Clock::now() + timeout_;
  auto pause = std::chrono::milliseconds(5);
  while (true) {
    try {
      if (store_->check({key})) return text(store_->get(key));
    } catch (const std::exception& e) {
      throw Error(fmt::format("rank {}: the rendezvous store at {} failed ({}): {}", env_.rank, address(), key, short_what(e)));
    }
    const std::string why = fault();
    if (!why.empty()) throw Error(fmt::format("rank {}: stopped waiting for {}: {}", env_.rank, key, why));
    const Clock::time_point now = Clock::now();
    if (now > deadline)
      throw Error(fmt::format("rank {}: waited {} s (FOXEVAL_DIST_TIMEOUT) for {} in the store at {}", env_.rank,
                              timeout_.count() / 1000, key, address()));
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now + std::chrono::milliseconds(1)));
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

void DistributedSession::barrier(const std::string& name, const std::string& status) {
  std::string first_error;
  try {
    set(fmt::format("{}/{}", name, env_.rank), status.empty() ? "ok" : status);
    // One deadline for the whole barrier: FOXEVAL_DIST_TIMEOUT holds, not once per missing rank.
    const Clock::time_point deadline = Clock::now() + timeout_;
    for (int64_t r = 0; r < env_.world; ++r) {
      const std::string key = fmt::format("{}/{}", name, r);
      auto present = [&] {
        try {
          return store_->check({key});
        } catch (const std::exception& e) {
          throw Error(fmt::format("rank {}: the rendezvous store at {} failed ({}): {}", env_.rank, address(), key, short_what(e)));
        }
      };
      while (!present()) {
        const std::string why = fault();
        if (!why.empty()) throw Error(fmt::format("rank {}: stopped waiting for {}: {}", env_.rank, key, why));
        if (Clock::now() > deadline)
          throw Error(fmt::format("rank {}: waited {} s (FOXEVAL_DIST_TIMEOUT) for {} in the store at {}", env_.rank,
                                  timeout_.count() / 1000, key, address()));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      const std::string s = get(key);
      if (s != "ok" && first_error.empty()) first_error = fmt::format("rank {}: {}", r, s);
    }
  } catch (const Error&) {
    leave(name);
    throw;
  }
  if (first_error.empty()) return;
  leave(name);  // every rank throws now: rank 0 must not take the store before the others read
  throw Error(first_error);
}

void DistributedSession::leave(const std::string& name) {
  const std::string key = name + "/left";
  if (env_.rank != 0) {
    try {
      add(key, 1);
    } catch (const Error&) {  // the store is gone already: nobody waits for us
    }
    return;
  }
  // Only ranks that signed in (the session's constructor) can leave: one that never came (a job
  // short of ranks) is not waited for, so a refusal keeps FOXEVAL_DIST_TIMEOUT.
  auto others_alive = [this] {
    int64_t came = 0;
    for (int64_t r = 1; r < env_.world; ++r) {
      bool in = false;
      try {
        in = store_->check({fmt::format("signed_in/{}", r)});
      } catch (const std::exception&) {
      }
      std::lock_guard<std::mutex> lock(mu_);
      came += in && !dead_.count(r);
    }
    return came;
  };
  const auto deadline = Clock::now() + std::min<Clock::duration>(std::chrono::seconds(30), timeout_);
  while (add(key, 0) < others_alive() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void DistributedSession::after_item(int64_t items_done_here) {
  if (die_after_ >= 0 && env_.rank == die_rank_ && items_done_here >= die_after_) {
    std::fprintf(stderr, "[foxeval] FOXEVAL_TEST_DIE_AFTER=%lld: rank %lld kills itself\n",
                 static_cast<long long>(die_after_), static_cast<long long>(env_.rank));
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
}

void DistributedSession::before_first_claim() {
  if (die_after_ >= 0 && env_.rank != die_rank_) (void)get("test/die_rank_claimed");  // blocks until set
}

void DistributedSession::after_first_claim() {
  if (die_after_ >= 0 && env_.rank == die_rank_) set("test/die_rank_claimed", "1");
}

}  // namespace foxeval
