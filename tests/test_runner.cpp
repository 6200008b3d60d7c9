// The task runner: journal, resume, refusal of other settings, shards and merge, torn journals.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <type_traits>
#include <utility>
#include <set>
#include <regex>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tests/temp_files.h"

namespace foxeval {
namespace {

using test::error_of;
using test::TempDir;

std::vector<WorkItem> items_of(int n) {
  std::vector<WorkItem> items;
  for (int i = 0; i < n; ++i) items.push_back({"item_" + std::to_string(i), static_cast<double>(1 + (i * 7) % 5)});
  return items;
}

// The result: the records in item order, and their sum (what a task would aggregate).
nlohmann::json build_sum(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  double total = 0;
  for (const auto& r : records) total += r.at("value").get<double>();
  return {{"records", records}, {"total", total}, {"mode", identity.at("mode")}};
}
ResultBuilderRegistrar register_test_task("runner-test", build_sum);

nlohmann::json value_of(const std::string& id) { return {{"value", static_cast<double>(id.size()) * 0.5 + id.back()}}; }

RunnerSettings settings_of(const std::string& out, bool resume, int64_t shards, int64_t index) {
  RunnerSettings rs;
  rs.out_path = out;
  rs.resume = resume;
  rs.num_shards = shards;
  rs.shard_index = index;
  return rs;
}

nlohmann::json run_all(const std::string& out, int64_t shards = 1, int64_t index = 0, bool resume = false,
                       int stop_after = -1) {
  RecordRunner run(settings_of(out, resume, shards, index), "runner-test", {{"mode", "standard"}}, items_of(9));
  int done = 0;
  for (size_t i : run.todo()) {
    if (done == stop_after) run.interrupt();
    run.finish(run.items()[i].id, value_of(run.items()[i].id));
    ++done;
  }
  return run.complete(build_sum);
}

nlohmann::json without_header(nlohmann::json j) {
  j.erase("header");
  return j;
}

}  // namespace

TEST_CASE("runner: an interrupted run resumed equals an uninterrupted one") {
  TempDir dir("runner");
  const nlohmann::json full = run_all((dir.path / "full.json").string());
  CHECK(full.at("records").size() == 9);
  CHECK(full.at("header").at("task") == "runner-test");
  CHECK(full.at("header").at("settings").at("mode") == "standard");

  const std::string out = (dir.path / "resumed.json").string();
  CHECK(error_of<RunInterrupted>([&] { run_all(out, 1, 0, false, 4); }).find("--resume") != std::string::npos);
  CHECK(std::filesystem::exists(out + ".journal.jsonl"));
  CHECK(!std::filesystem::exists(out));
  // Without --resume the journal is not silently overwritten.
  CHECK(error_of<Error>([&] { run_all(out); }).find("pass --resume") != std::string::npos);
  {
    RecordRunner again(settings_of(out, true, 1, 0), "runner-test", {{"mode", "standard"}}, items_of(9));
    CHECK(again.todo().size() == 5);  // 4 were done
  }
  const nlohmann::json resumed = run_all(out, 1, 0, true);
  CHECK(without_header(resumed) == without_header(full));
  CHECK(!std::filesystem::exists(out + ".journal.jsonl"));
}

TEST_CASE("runner: a journal made with other settings is refused, naming the setting") {
  TempDir dir("runner");
  const std::string out = (dir.path / "r.json").string();
  CHECK_THROWS_AS(run_all(out, 1, 0, false, 2), RunInterrupted);
  const std::string msg = error_of<Error>([&] {
    RecordRunner run(settings_of(out, true, 1, 0), "runner-test", {{"mode", "easy"}}, items_of(9));
  });
  CHECK(msg.find("refusing to resume") != std::string::npos);
  CHECK(msg.find("mode") != std::string::npos);
}

TEST_CASE("runner: a torn last journal line (killed mid-write) is dropped; a damaged middle line is an error") {
  TempDir dir("runner");
  const std::string out = (dir.path / "r.json").string();
  const nlohmann::json full = run_all((dir.path / "full.json").string());
  CHECK_THROWS_AS(run_all(out, 1, 0, false, 3), RunInterrupted);
  { std::ofstream(out + ".journal.jsonl", std::ios::app) << "{\"id\": \"item_5\", \"rec"; }
  {
    RecordRunner run(settings_of(out, true, 1, 0), "runner-test", {{"mode", "standard"}}, items_of(9));
    CHECK(run.todo().size() == 6);
  }
  CHECK(without_header(run_all(out, 1, 0, true)) == without_header(full));

  CHECK_THROWS_AS(run_all(out, 1, 0, false, 3), RunInterrupted);
  const std::string journal = out + ".journal.jsonl";
  std::string text = read_text_file(journal);
  text.insert(text.find('\n') + 1, "garbage\n");
  { std::ofstream(journal, std::ios::trunc) << text; }
  CHECK(error_of<Error>([&] { run_all(out, 1, 0, true); }).find("line 2") != std::string::npos);
}

TEST_CASE("runner: shards take every item once, balanced by cost; merged parts equal one run") {
  const std::vector<WorkItem> items = items_of(9);
  std::vector<int> seen(items.size(), 0);
  double load[3] = {0, 0, 0};
  for (int s = 0; s < 3; ++s)
    for (size_t i : shard_items(items, 3, s)) {
      ++seen[i];
      load[s] += items[i].cost;
    }
  for (int n : seen) CHECK(n == 1);
  CHECK(std::max({load[0], load[1], load[2]}) - std::min({load[0], load[1], load[2]}) <= 5.0);

  TempDir dir("runner");
  const nlohmann::json full = run_all((dir.path / "full.json").string());
  std::vector<std::string> parts;
  for (int s = 0; s < 3; ++s) {
    parts.push_back((dir.path / ("part" + std::to_string(s) + ".json")).string());
    CHECK(run_all(parts.back(), 3, s).at("kind") == "foxeval-part");
  }
  const nlohmann::json merged = merge_task_parts(parts, (dir.path / "merged.json").string());
  CHECK(without_header(merged) == without_header(full));
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], parts[2]}, (dir.path / "m.json").string()); })
            .find("shard 1 of 3 is missing") != std::string::npos);
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], parts[0], parts[1]}, (dir.path / "m.json").string()); })
            .find("given twice") != std::string::npos);
}

TEST_CASE("runner: digest_paths changes with a file's bytes and name, not with listing order") {
  TempDir dir("runner");
  { std::ofstream(dir.path / "b.txt") << "bee"; }
  { std::ofstream(dir.path / "a.txt") << "ay"; }
  const std::string d1 = digest_paths({dir.path.string()});
  CHECK(d1 == digest_paths({dir.path.string()}));
  { std::ofstream(dir.path / "a.txt") << "az"; }
  CHECK(digest_paths({dir.path.string()}) != d1);
}

// ---- Reducer mode: one exact state instead of a record per item ----
namespace {

// A toy reducer: an int64 sum and count (exact and order-independent, as loss's fixed-point sums).
struct SumState : ReducerState {
  int64_t total = 0, count = 0;
  nlohmann::json to_json() const override { return {{"total", total}, {"count", count}}; }
  void merge(const ReducerState& other) override {
    const auto& o = dynamic_cast<const SumState&>(other);
    total += o.total;
    count += o.count;
  }
};

Reducer sum_reducer() {
  Reducer r;
  r.load = [](const nlohmann::json&, const nlohmann::json* saved) {
    auto s = std::make_unique<SumState>();
    if (saved) {
      s->total = saved->at("total").get<int64_t>();
      s->count = saved->at("count").get<int64_t>();
      if (s->count < 0) throw Error("count must be >= 0");
    }
    return std::unique_ptr<ReducerState>(std::move(s));
  };
  r.finish = [](const nlohmann::json& identity, const ReducerState& state, double) {
    const auto& s = dynamic_cast<const SumState&>(state);
    return nlohmann::json{{"total", s.total}, {"count", s.count}, {"mode", identity.at("mode")}};
  };
  return r;
}
ReducerRegistrar register_reduce_task("runner-reduce-test", sum_reducer());

// Large, distinct values: a lost or doubled item changes the total.
int64_t reduce_value(size_t i) { return (int64_t(1) << 40) + static_cast<int64_t>(i * i * 1000003 + 7); }

RunnerSettings reduce_settings(const std::string& out, int64_t shards = 1, int64_t index = 0, bool resume = false) {
  return settings_of(out, resume, shards, index);
}

// Finishes up to `stop_after` items (then interrupt()), or all of them and completes.
nlohmann::json run_reduced(const RunnerSettings& rs, int stop_after = -1, const std::string& mode = "standard") {
  ReducerRunner run(rs, "runner-reduce-test", {{"mode", mode}}, items_of(9), sum_reducer());
  int done = 0;
  while (std::optional<size_t> i = run.claim()) {
    if (done == stop_after) run.interrupt();
    SumState one;
    one.total = reduce_value(*i);
    one.count = 1;
    run.finish(run.items()[*i].id, one, 2.0);
    ++done;
  }
  return run.complete(sum_reducer().finish);
}

}  // namespace

TEST_CASE("runner, reducer mode: interrupted and resumed, or saved and killed, equals one run; other settings refused") {
  TempDir dir("runner_reduce");
  const nlohmann::json full = run_reduced(reduce_settings((dir.path / "full.json").string()));
  int64_t want = 0;
  for (size_t i = 0; i < 9; ++i) want += reduce_value(i);
  CHECK(full.at("total") == want);
  CHECK(full.at("count") == 9);
  CHECK(full.at("header").at("task") == "runner-reduce-test");

  const std::string out = (dir.path / "r.json").string();
  CHECK(error_of<RunInterrupted>([&] { run_reduced(reduce_settings(out), 4); }).find("--resume") != std::string::npos);
  CHECK(std::filesystem::exists(out + ".state.json"));
  CHECK(!std::filesystem::exists(out));
  const nlohmann::json saved = read_json(out + ".state.json");
  CHECK(saved.at("done").size() == 4);
  CHECK(saved.at("state").at("count") == 4);
  CHECK(error_of<Error>([&] { run_reduced(reduce_settings(out)); }).find("pass --resume") != std::string::npos);
  const std::string other = error_of<Error>([&] { run_reduced(reduce_settings(out, 1, 0, true), -1, "easy"); });
  CHECK(other.find("refusing to resume") != std::string::npos);
  CHECK(other.find("mode") != std::string::npos);
  {
    ReducerRunner again(reduce_settings(out, 1, 0, true), "runner-reduce-test", {{"mode", "standard"}}, items_of(9), sum_reducer());
    CHECK(again.todo().size() == 5);
    CHECK(again.done(saved.at("done")[0].get<std::string>()));
  }
  CHECK(without_header(run_reduced(reduce_settings(out, 1, 0, true))) == without_header(full));
  CHECK(!std::filesystem::exists(out + ".state.json"));

  // Saved every save_every_seconds: a run that dies (no interrupt, no complete) leaves its last save.
  const std::string killed = (dir.path / "k.json").string();
  {
    RunnerSettings rs = reduce_settings(killed);
    rs.save_every_seconds = 1e-9;  // every item
    ReducerRunner run(rs, "runner-reduce-test", {{"mode", "standard"}}, items_of(9), sum_reducer());
    for (int k = 0; k < 3; ++k) {
      const size_t i = *run.claim();
      SumState one;
      one.total = reduce_value(i);
      one.count = 1;
      run.finish(run.items()[i].id, one);
    }
  }
  CHECK(read_json(killed + ".state.json").at("done").size() == 3);
  CHECK(without_header(run_reduced(reduce_settings(killed, 1, 0, true))) == without_header(full));

  // A damaged state is refused, naming the file.
  CHECK_THROWS_AS(run_reduced(reduce_settings(out), 2), RunInterrupted);
  { std::ofstream(out + ".state.json", std::ios::trunc) << "{\"foxeval_state\": 1, \"task\": \"runner-reduce-test\""; }
  CHECK(error_of<Error>([&] { run_reduced(reduce_settings(out, 1, 0, true)); }).find(out + ".state.json") != std::string::npos);
  // A record where a state is expected (and the other way round) does not compile: each mode is
  // its own type (the static_asserts below).
}

TEST_CASE("runner, reducer mode: shard parts merged equal one run, bit for bit") {
  TempDir dir("runner_reduce");
  const nlohmann::json full = run_reduced(reduce_settings((dir.path / "full.json").string()));
  std::vector<std::string> parts;
  for (int s = 0; s < 3; ++s) {
    parts.push_back((dir.path / ("part" + std::to_string(s) + ".json")).string());
    const nlohmann::json part = run_reduced(reduce_settings(parts.back(), 3, s));
    CHECK(part.at("kind") == "foxeval-part");
    CHECK(part.at("done").size() == shard_items(items_of(9), 3, s).size());
  }
  // A shard interrupted and resumed writes the same part.
  const std::string p1 = (dir.path / "p1.json").string();
  CHECK_THROWS_AS(run_reduced(reduce_settings(p1, 3, 1), 1), RunInterrupted);
  CHECK(run_reduced(reduce_settings(p1, 3, 1, true)).at("state") == read_json(parts[1]).at("state"));
  const nlohmann::json merged = merge_task_parts({parts[2], parts[0], p1}, (dir.path / "merged.json").string());
  CHECK(without_header(merged) == without_header(full));
  CHECK(merged.at("header").at("merged_from").size() == 3);
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], parts[2]}, (dir.path / "m.json").string()); })
            .find("shard 1 of 3 is missing") != std::string::npos);
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], parts[0], parts[1]}, (dir.path / "m.json").string()); })
            .find("given twice") != std::string::npos);
  // A part whose state does not load is refused, naming the file.
  nlohmann::json bad = read_json(parts[1]);
  bad["state"]["count"] = -1;
  write_json_atomic((dir.path / "bad.json").string(), bad);
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], (dir.path / "bad.json").string(), parts[2]}, (dir.path / "m.json").string()); })
            .find("bad.json: count must be >= 0") != std::string::npos);
}

}  // namespace foxeval

namespace foxeval {

// Runner::claim / claim_batch in one process (the distributed counter is tested end to end by
// tests/cli_distributed_test.sh): open items longest first, ties in item order, each once.
TEST_CASE("claim_batch in one process hands out the open items longest first, each once, then nothing") {
  TempDir dir("runner");
  const std::vector<WorkItem> items = items_of(9);  // costs 1 3 5 2 4 1 3 5 2
  const std::string out = (dir.path / "c.json").string();
  RecordRunner run(settings_of(out, false, 1, 0), "runner-test", {{"mode", "standard"}}, items);
  std::vector<size_t> order;
  for (std::vector<size_t> b = run.claim_batch(4); !b.empty(); b = run.claim_batch(4)) {
    CHECK(b.size() == (order.size() < 8 ? 4u : 1u));
    order.insert(order.end(), b.begin(), b.end());
  }
  CHECK(order == std::vector<size_t>{2, 7, 4, 1, 6, 3, 8, 0, 5});
  CHECK(run.claim_batch(4).empty());
  CHECK(!run.claim().has_value());
  CHECK(error_of<Error>([&] { run.claim_batch(0); }).find("claim_batch(0)") != std::string::npos);
  for (size_t i : order) run.finish(items[i].id, value_of(items[i].id));
  // Finished in another order than item order: the result is still built in item order.
  CHECK(without_header(run.complete(build_sum)) == without_header(run_all((dir.path / "todo.json").string())));
}

TEST_CASE("claim after a resume skips the journaled items; a static shard claims only its own") {
  TempDir dir("runner");
  const std::vector<WorkItem> items = items_of(9);
  const std::string out = (dir.path / "r.json").string();
  CHECK(!error_of<RunInterrupted>([&] { run_all(out, 1, 0, false, 3); }).empty());  // items 0, 1, 2 journaled
  {
    RecordRunner run(settings_of(out, true, 1, 0), "runner-test", {{"mode", "standard"}}, items);
    std::vector<size_t> order;
    while (std::optional<size_t> i = run.claim()) order.push_back(*i);
    CHECK(order == std::vector<size_t>{7, 4, 6, 3, 8, 5});
  }
  RecordRunner shard(settings_of((dir.path / "s.json").string(), false, 3, 1), "runner-test", {{"mode", "standard"}}, items);
  std::vector<size_t> mine = shard_items(items, 3, 1), claimed;
  for (std::vector<size_t> b = shard.claim_batch(2); !b.empty(); b = shard.claim_batch(2)) claimed.insert(claimed.end(), b.begin(), b.end());
  CHECK(claimed.size() == mine.size());
  for (size_t k = 1; k < claimed.size(); ++k) CHECK(items[claimed[k - 1]].cost >= items[claimed[k]].cost);
  std::sort(claimed.begin(), claimed.end());
  CHECK(claimed == mine);
}

}  // namespace foxeval

namespace foxeval {
namespace {

// Each mode is its own type: finish and complete take only what their mode is made of, so a
// record task finishing with a state (or a reducer task with a record) is a compile error.
template <typename, typename R, typename... A>
struct can_finish : std::false_type {};
template <typename R, typename... A>
struct can_finish<std::void_t<decltype(std::declval<R&>().finish(std::declval<A>()...))>, R, A...> : std::true_type {};
template <typename, typename R, typename A>
struct can_complete : std::false_type {};
template <typename R, typename A>
struct can_complete<std::void_t<decltype(std::declval<R&>().complete(std::declval<A>()))>, R, A> : std::true_type {};

static_assert(can_finish<void, RecordRunner, std::string, nlohmann::json>::value);
static_assert(!can_finish<void, RecordRunner, std::string, const ReducerState&>::value);
static_assert(can_finish<void, ReducerRunner, std::string, const ReducerState&>::value);
static_assert(!can_finish<void, ReducerRunner, std::string, nlohmann::json>::value);
static_assert(can_complete<void, RecordRunner, ResultBuilder>::value);
static_assert(!can_complete<void, RecordRunner, ReducerFinish>::value);
static_assert(can_complete<void, ReducerRunner, ReducerFinish>::value);
static_assert(!can_complete<void, ReducerRunner, ResultBuilder>::value);
// No positional `RunnerSettings{out, resume, ...}`: its fields are set by name.
static_assert(!std::is_aggregate_v<RunnerSettings>);
static_assert(!std::is_constructible_v<RunnerSettings, std::string, bool, int64_t, int64_t>);

}  // namespace
}  // namespace foxeval

namespace foxeval {

// The runner knows no model (the layers allow tasks/ to include models/, so the build's layer
// check cannot hold this): tasks/run/runner.{h,cpp} and every project header they include, and those
// headers' own, name nothing under models/.
TEST_CASE("runner: tasks/run/runner.h and runner.cpp include nothing from models/, directly or through a header") {
  const std::filesystem::path root = std::filesystem::path(FOXEVAL_DATA_DIR).parent_path();
  const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> todo = {"tasks/run/runner.h", "tasks/run/runner.cpp"};
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string file = todo.back();
    todo.pop_back();
    if (!seen.insert(file).second) continue;
    std::ifstream in(root / file);
    REQUIRE_MESSAGE(in.good(), (root / file).string());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string inc = m[1].str();
      CHECK_MESSAGE(inc.rfind("models/", 0) != 0, file, " includes ", inc);
      if (std::filesystem::exists(root / inc)) todo.push_back(inc);
    }
  }
  CHECK(seen.count("tasks/run/distributed.h") == 1);  // the walk follows the project's headers
  CHECK(seen.size() > 8);
}

}  // namespace foxeval
