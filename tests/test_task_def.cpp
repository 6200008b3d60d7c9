// One definition per task (tasks/task_def.h): the toy task of tests/toy_task/, which no generic file
// names, shows up in every generic place through its one registration line: tables, check's
// directions and tolerances, identity's path keys, the flags that change no number, merge.
// The real tasks' definitions keep what the generic code held before (directions, tolerances, keys).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/json_file.h"
#include "tasks/results/check.h"
#include "tasks/run/identity.h"
#include "tasks/run/result_file.h"
#include "tasks/results/results_table.h"
#include "tasks/task_def.h"
#include "tests/temp_files.h"
#include "tests/toy_task/toy_task.h"

namespace foxeval {
namespace {

using test::TempDir;

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string numbers_file(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  const std::string p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

nlohmann::json run(const std::string& data, const std::string& out, double scale = 1, int64_t shards = 1,
                   int64_t index = 0) {
  toy::ToySettings s;
  s.data_path = data;
  s.out_path = out;
  s.scale = scale;
  s.num_shards = shards;
  s.shard_index = index;
  return toy::run_toy(s);
}

}  // namespace

TEST_CASE("task definitions: the toy task is registered from its folder, with its rules") {
  const TaskDef* toy = find_task("toy");
  REQUIRE(toy != nullptr);
  CHECK(results::find_kind("toy") != nullptr);
  CHECK(find_result_builder("toy") != nullptr);
  CHECK(metric_direction("toy_error", "toy") == Direction::Lower);
  CHECK(metric_direction("toy_score", "toy") == Direction::Higher);
  CHECK(metric_direction("per_item/toy_score/values", "toy") == Direction::Higher);
  // A task's own rules only: loss's "*loss*" rule does not reach a toy metric of that name.
  CHECK(metric_direction("val/loss_avg_len_512", "toy") == Direction::None);
  CHECK(default_tolerance("toy_error", "toy") == std::make_pair(0.25, 0.0));
  CHECK(default_tolerance("toy_score", "toy") == std::make_pair(0.0, 0.0));
  CHECK(has(identity_information_keys(), "toy_file"));
  CHECK(has(task_information_flags(), "--toy-verbose"));
  const nlohmann::json listed = task_defs_json();
  CHECK(std::any_of(listed.begin(), listed.end(), [](const nlohmann::json& t) { return t["name"] == "toy"; }));
  // Its suite entry is a field of the definition: `foxeval suite` finds it in the one registry.
  CHECK(static_cast<bool>(toy->suite_entry));
  CHECK(has(suite_task_names(), "toy"));
  for (const char* task : {"babilong", "inspect-gates", "lm-eval", "longbench", "loss", "niah", "ruler"})
    CHECK_MESSAGE(has(suite_task_names(), task), task);
}

TEST_CASE("task definitions: the real tasks keep the directions and tolerances check used to hard-code") {
  CHECK(metric_direction("val/loss_avg_len_512", "loss") == Direction::Lower);
  CHECK(metric_direction("results/piqa/acc,none", "lm-eval") == Direction::Higher);
  CHECK(metric_direction("results/wikitext/bits_per_byte,none", "lm-eval") == Direction::Lower);
  CHECK(metric_direction("scores/qasper", "longbench") == Direction::Higher);
  CHECK(metric_direction("cells/2/score", "niah") == Direction::Higher);
  CHECK(metric_direction("acc/qa1/0k", "babilong") == Direction::Higher);
  CHECK(metric_direction("results/piqa/acc_stderr,none", "lm-eval") == Direction::None);
  CHECK(default_tolerance("val/loss_avg_len_512", "loss") == std::make_pair(1e-4, 0.0));
  CHECK(default_tolerance("val/perplexity_len_512", "loss") == std::make_pair(0.0, 1e-5));
  CHECK(default_tolerance("results/wikitext/word_perplexity,none", "lm-eval") == std::make_pair(0.0, 1e-5));
  CHECK(default_tolerance("results/piqa/acc_stderr,none", "lm-eval") == std::make_pair(0.0, 1e-5));
  CHECK(default_tolerance("results/piqa/acc,none", "lm-eval") == std::make_pair(0.0, 0.0));
  CHECK(default_tolerance("scores/qasper", "longbench") == std::make_pair(0.0, 0.0));
  // No task named (a file without a header): any task's rule.
  CHECK(default_tolerance("val/loss_avg_len_512") == std::make_pair(1e-4, 0.0));
  for (const char* k : {"model", "out", "num_shards", "model_digest_source", "haystack", "pred_dir", "data_dir"})
    CHECK_MESSAGE(has(identity_information_keys(), k), k);
  for (const char* f : {"--haystack", "--pred-dir", "--config", "--log-samples"}) CHECK_MESSAGE(has(task_information_flags(), f), f);
}

TEST_CASE("task definitions: the toy task's results in table, check and merge") {
  TempDir dir("toy_task");
  const std::string data = numbers_file(dir.path, "numbers.txt", "1\n2.5\n4\n7.25\n");
  const std::string one = (dir.path / "one.json").string();
  const nlohmann::json whole = run(data, one);
  CHECK(whole.at("header").at("task") == "toy");
  CHECK(whole.at("toy_score").get<double>() == doctest::Approx(3.6875));

  SUBCASE("merge: two shards give the one run's result") {
    const std::string p0 = (dir.path / "p0.json").string(), p1 = (dir.path / "p1.json").string();
    run(data, p0, 1, 2, 0);
    run(data, p1, 1, 2, 1);
    const nlohmann::json merged = merge_task_parts({p0, p1}, (dir.path / "merged.json").string());
    for (const char* k : {"toy_score", "toy_error", "items", "per_item"}) CHECK_MESSAGE(merged.at(k) == whole.at(k), k);
  }
  SUBCASE("table: its own table, the score's column ranked higher-is-better, the error's lower") {
    const std::vector<results::Table> tables = results::build_tables({results::read_result(one)});
    REQUIRE(tables.size() == 1);
    CHECK(tables[0].id == "toy");
    REQUIRE(tables[0].columns.size() == 2);
    CHECK_FALSE(tables[0].columns[0].lower_is_better);
    CHECK(tables[0].columns[1].lower_is_better);
  }
  SUBCASE("identity: the same numbers in another file pass check; other numbers are other data") {
    // The same name in another folder (a file's digest covers its name: tasks/run/identity.h).
    std::filesystem::create_directories(dir.path / "moved");
    const std::string moved = numbers_file(dir.path / "moved", "numbers.txt", "1\n2.5\n4\n7.25\n");
    const std::string moved_out = (dir.path / "moved.json").string();
    run(moved, moved_out);
    const CheckReport same = check_against_baseline(moved_out, one, {});
    CHECK(same.settings_differ.empty());
    const std::string other = numbers_file(dir.path, "other.txt", "1\n2.5\n4\n7\n");
    const std::string other_out = (dir.path / "other.json").string();
    run(other, other_out);
    CHECK_FALSE(check_against_baseline(other_out, one, {}).settings_differ.empty());
  }
  SUBCASE("check: its direction and its default tolerance") {
    // Edit the result as a regression would: the error up by 0.2 (within its 0.25), the score down.
    nlohmann::json worse = read_json(one);
    worse["toy_error"] = worse["toy_error"].get<double>() + 0.2;
    worse["toy_score"] = worse["toy_score"].get<double>() - 1;
    const std::string worse_path = (dir.path / "worse.json").string();
    std::ofstream(worse_path) << worse.dump();
    const CheckReport r = check_against_baseline(worse_path, one, {});
    bool saw_error = false, saw_score = false;
    for (const CheckRow& row : r.rows) {
      if (row.metric == "toy_error") {
        saw_error = true;
        CHECK(row.ok);
        CHECK(row.tolerance == doctest::Approx(0.25));
        CHECK(row.direction == Direction::Lower);
      }
      if (row.metric == "toy_score") {
        saw_score = true;
        CHECK_FALSE(row.ok);
        CHECK(row.change == Change::Worsened);
      }
    }
    CHECK(saw_error);
    CHECK(saw_score);
  }
}

}  // namespace foxeval
