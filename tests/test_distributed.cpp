// The Runner across processes (tasks/run/distributed.h): forked ranks on a TCPStore at 127.0.0.1 (rank 0
// hosts it, as under srun/mpirun) share the items, rank 0 writes one result equal to one process's,
// a dead rank stops the others with its name and --resume with another rank count finishes it; in
// record mode (journals) and in reducer mode (saved states merged at rank 0).
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/run/distributed.h"
#include "tasks/run/runner.h"
#include "tests/temp_files.h"

namespace foxeval {
namespace {

using test::TempDir;

std::vector<WorkItem> dist_items() {
  std::vector<WorkItem> items;
  for (int i = 0; i < 11; ++i) items.push_back({"cell_" + std::to_string(i), static_cast<double>(1 + (i * 5) % 7)});
  return items;
}

nlohmann::json build_cells(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  int64_t total = 0;
  for (const auto& r : records) total += r.at("v").get<int64_t>();
  return {{"records", records}, {"total", total}, {"mode", identity.at("mode")}};
}
ResultBuilderRegistrar register_dist_task("distributed-test", build_cells);

// Reducer mode: an exact sum of the cells' values and of their squares.
struct CellSums : ReducerState {
  int64_t total = 0, squares = 0, count = 0;
  nlohmann::json to_json() const override { return {{"total", total}, {"squares", squares}, {"count", count}}; }
  void merge(const ReducerState& other) override {
    const auto& o = dynamic_cast<const CellSums&>(other);
    total += o.total;
    squares += o.squares;
    count += o.count;
  }
};
Reducer cell_reducer() {
  Reducer r;
  r.load = [](const nlohmann::json&, const nlohmann::json* saved) {
    auto s = std::make_unique<CellSums>();
    if (saved) {
      s->total = saved->at("total").get<int64_t>();
      s->squares = saved->at("squares").get<int64_t>();
      s->count = saved->at("count").get<int64_t>();
    }
    return std::unique_ptr<ReducerState>(std::move(s));
  };
  r.finish = [](const nlohmann::json& identity, const ReducerState& state, double) {
    const auto& s = dynamic_cast<const CellSums&>(state);
    return nlohmann::json{{"total", s.total}, {"squares", s.squares}, {"count", s.count}, {"mode", identity.at("mode")}};
  };
  return r;
}
ReducerRegistrar register_dist_reduce("distributed-reduce-test", cell_reducer());
CellSums cell_sums(size_t i) {
  CellSums c;
  c.total = static_cast<int64_t>(i * i + 1);
  c.squares = c.total * c.total;
  c.count = 1;
  return c;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One rank's whole life, in a forked child: exit 0 (result written or received), 3 (stopped,
// saved), 1 (an Error; its message goes to err_path).
[[noreturn]] void rank_main(const std::string& out, int port, int rank, int world, bool resume, bool use_claim,
                            const std::string& err_path, bool reduce) {
  int code = 0;
  try {
    ::setenv("MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("FOXEVAL_HEARTBEAT_TIMEOUT", "2", 1);
    ::setenv("FOXEVAL_DIST_TIMEOUT", "30", 1);
    const ShardPlan plan = plan_shards("distributed-test", -1, -1);
    if (!plan.ranks) throw Error("not distributed");
    RunnerSettings rs;
    rs.out_path = out;
    rs.resume = resume;
    rs.ranks = plan.ranks;
    // Either mode's runner through the same steps: its items' contributions, then its result.
    auto go = [&](auto& run, const auto& contribution, const auto& complete) {
      auto work = [&](size_t i) {
        if (run.should_stop()) run.interrupt();
        ::usleep(30000);  // so every rank gets a share
        run.finish(run.items()[i].id, contribution(i));
      };
      if (use_claim) {
        while (auto i = run.claim()) work(*i);
      } else {
        for (size_t i : run.todo()) work(i);
      }
      run.complete(complete);
    };
    if (reduce) {
      ReducerRunner run(rs, "distributed-reduce-test", nlohmann::json{{"mode", "m"}}, dist_items(), cell_reducer());
      go(run, [](size_t i) { return cell_sums(i); }, cell_reducer().finish);
    } else {
      RecordRunner run(rs, "distributed-test", nlohmann::json{{"mode", "m"}}, dist_items());
      const auto record = [&](size_t i) {
        return nlohmann::json{{"v", static_cast<int64_t>(i * i + 1)}, {"id", run.items()[i].id}};
      };
      go(run, record, ResultBuilder(build_cells));
    }
  } catch (const RunInterrupted& e) {
    std::ofstream(err_path) << e.what();
    code = 3;
  } catch (const std::exception& e) {
    std::ofstream(err_path) << e.what();
    code = 1;
  }
  std::_Exit(code);  // no flush: stdio buffers inherited from the test process are not ours
}

// Forks `world` ranks; returns their exit codes (128 + signal when killed). `die` sets the test
// hook in rank 1.
std::vector<int> run_ranks(const std::string& out, int world, bool resume, bool use_claim, int die_after = -1,
                           bool reduce = false) {
  const int port = free_port();
  std::vector<pid_t> pids;
  std::fflush(nullptr);
  for (int r = 0; r < world; ++r) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (die_after >= 0) ::setenv("FOXEVAL_TEST_DIE_AFTER", std::to_string(die_after).c_str(), 1);
      rank_main(out, port, r, world, resume, use_claim, out + ".err" + std::to_string(r), reduce);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t p : pids) {
    int status = 0;
    ::waitpid(p, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

nlohmann::json core(nlohmann::json j) {
  j.erase("header");
  return j;
}

int journal_count(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".journal") != std::string::npos) ++n;
  return n;
}

nlohmann::json one_process_reduced(const std::string& out) {
  RunnerSettings rs;
  rs.out_path = out;
  ReducerRunner run(rs, "distributed-reduce-test", {{"mode", "m"}}, dist_items(), cell_reducer());
  for (size_t i : run.todo()) run.finish(run.items()[i].id, cell_sums(i));
  return run.complete(cell_reducer().finish);
}

nlohmann::json one_process(const std::string& out) {
  RunnerSettings rs;
  rs.out_path = out;
  RecordRunner run(rs, "distributed-test", {{"mode", "m"}}, dist_items());
  for (size_t i : run.todo()) run.finish(run.items()[i].id, {{"v", static_cast<int64_t>(i * i + 1)}, {"id", run.items()[i].id}});
  return run.complete(build_cells);
}

}  // namespace

TEST_CASE("distributed: 3 ranks (claim) and 2 ranks (todo) write one result equal to one process") {
  TempDir dir("dist");
  const nlohmann::json want = core(one_process((dir.path / "one.json").string()));
  for (const bool use_claim : {true, false}) {
    const int world = use_claim ? 3 : 2;
    const std::string out = (dir.path / ("d" + std::to_string(world) + ".json")).string();
    const std::vector<int> codes = run_ranks(out, world, false, use_claim);
    for (int r = 0; r < world; ++r) CHECK_MESSAGE(codes[r] == 0, "rank ", r, ": ", text_of(out + ".err" + std::to_string(r)));
    const nlohmann::json got = read_json(out);
    CHECK(core(got) == want);
    CHECK(got.at("header").at("world_size") == world);
  }
  CHECK(journal_count(dir.path) == 0);
}

TEST_CASE("distributed: a dead rank stops the others naming it; resume with another rank count") {
  TempDir dir("dist_fault");
  const nlohmann::json want = core(one_process((dir.path / "one.json").string()));
  const std::string out = (dir.path / "r.json").string();
  const std::vector<int> codes = run_ranks(out, 3, false, true, 2);  // rank 1 dies after 2 items
  CHECK(codes[1] == 128 + SIGKILL);
  for (int r : {0, 2}) {
    CHECK(codes[r] != 0);
    const std::string err = text_of(out + ".err" + std::to_string(r));
    CHECK_MESSAGE(err.find("rank 1 sent no heartbeat") != std::string::npos, "rank ", r, ": ", err);
  }
  CHECK(!std::filesystem::exists(out));
  // Rank 1's two items are in its journal, which every rank of the next run reads.
  CHECK(std::count(std::istreambuf_iterator<char>(std::ifstream(out + ".journal.rank1.jsonl").rdbuf()), {}, '\n') == 3);

  // Without --resume every rank refuses (one rank's refusal reaches all through the barrier).
  std::vector<int> refused = run_ranks(out, 2, false, true);
  CHECK(refused == std::vector<int>{1, 1});
  CHECK_MESSAGE(text_of(out + ".err1").find("--resume") != std::string::npos, "rank 1: ", text_of(out + ".err1"));

  const std::vector<int> resumed = run_ranks(out, 2, true, true);
  CHECK(resumed == std::vector<int>{0, 0});
  CHECK(core(read_json(out)) == want);
  int journals = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    if (e.path().filename().string().rfind("r.json.journal", 0) == 0) ++journals;
  CHECK(journals == 0);
}

TEST_CASE("distributed, reducer mode: ranks equal one process; a dead rank's saved state resumed with another count") {
  TempDir dir("dist_reduce");
  const nlohmann::json want = core(one_process_reduced((dir.path / "one.json").string()));
  CHECK(want.at("count") == 11);
  const std::string out = (dir.path / "d.json").string();
  const std::vector<int> codes = run_ranks(out, 3, false, true, -1, true);
  for (int r = 0; r < 3; ++r) CHECK_MESSAGE(codes[r] == 0, "rank ", r, ": ", text_of(out + ".err" + std::to_string(r)));
  CHECK(core(read_json(out)) == want);
  CHECK(read_json(out).at("header").at("world_size") == 3);

  const std::string k = (dir.path / "k.json").string();
  const std::vector<int> killed = run_ranks(k, 3, false, true, 2, true);  // rank 1 dies after its 2nd item
  CHECK(killed[1] == 128 + SIGKILL);
  CHECK(!std::filesystem::exists(k));
  // Rank 1 saved its state with both items before it died.
  const nlohmann::json st = read_json(k + ".state.rank1.json");
  CHECK(st.at("done").size() == 2);
  CHECK(st.at("state").at("count") == 2);
  const std::vector<int> resumed = run_ranks(k, 2, true, true, -1, true);
  CHECK_MESSAGE((resumed == std::vector<int>{0, 0}), text_of(k + ".err0"), " / ", text_of(k + ".err1"));
  CHECK(core(read_json(k)) == want);
  int states = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    if (e.path().filename().string().find(".state") != std::string::npos) ++states;
  CHECK(states == 0);
  // ... and one process continues a distributed run's states too.
  const std::string k1 = (dir.path / "k1.json").string();
  run_ranks(k1, 3, false, true, 1, true);
  CHECK(std::filesystem::exists(k1 + ".state.rank1.json"));
  RunnerSettings rs;
  rs.out_path = k1;
  rs.resume = true;
  ReducerRunner run(rs, "distributed-reduce-test", {{"mode", "m"}}, dist_items(), cell_reducer());
  for (size_t i : run.todo()) run.finish(run.items()[i].id, cell_sums(i));
  CHECK(core(run.complete(cell_reducer().finish)) == want);
}

TEST_CASE("distributed: a store nobody hosts is named in the error") {
  const int port = free_port();
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  DistributedEnv env;
  env.rank = 1;
  env.world = 2;
  env.host = "127.0.0.1";
  env.port = port;
  ::setenv("FOXEVAL_DIST_TIMEOUT", "1", 1);
  std::string err;
  try {
    DistributedSession s(env);
  } catch (const Error& e) {
    err = e.what();
  }
  ::unsetenv("FOXEVAL_DIST_TIMEOUT");
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
  CHECK(err.find("cannot reach the rendezvous store at 127.0.0.1:" + std::to_string(port)) != std::string::npos);
}

}  // namespace foxeval
