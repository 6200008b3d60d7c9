#include "tests/toy_task/toy_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "data/errors.h"
#include "tasks/results/item_stats.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/task_def.h"

namespace foxeval::toy {
namespace {

std::vector<double> read_numbers(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("--data {}: cannot open", path));
  std::vector<double> v;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    try {
      v.push_back(std::stod(line));
    } catch (const std::exception&) {
      throw Error(fmt::format("{}:{}: not a number: '{}'", path, n, line));
    }
  }
  if (v.empty()) throw Error(fmt::format("{}: no numbers", path));
  return v;
}

nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  double sum = 0, err = 0;
  ItemScores items;
  for (const nlohmann::json& r : records) {
    const double v = r.at("value").get<double>();
    sum += v;
    err += std::abs(v - std::round(v));
    items.ids.push_back(r.at("id").get<std::string>());
    items.values.push_back(v);
  }
  const double n = static_cast<double>(records.size());
  return {{"kind", "foxeval-toy"},
          {"identity", identity},
          {"toy_score", sum / n},
          {"toy_error", err / n},
          {"items", records.size()},
          {"per_item", {{"toy_score", per_item_entry(items)}}}};
}

results::ResultKind table_kind() {
  results::ResultKind k;
  k.task = "toy";
  k.order = 90;
  k.add = [](results::TableFiller& f, const results::ResultFile& r) {
    results::Table& t = f.table("toy", "Toy task");
    const size_t row = f.row(t, r.label);
    f.set(t, row, f.column(t, {"score", "Score", "Score", "", "", false, 3}), r.json.at("toy_score").get<double>(), r,
          "toy_score");
    f.set(t, row, f.column(t, {"error", "Error", "Error", "", "", false, 3}), r.json.at("toy_error").get<double>(), r,
          "toy_error");
  };
  return k;
}

// Its `foxeval suite` entry: the settings of `foxeval toy run` (flags without "--"). The suite's
// cap is --limit (the first numbers).
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  ToySettings s;
  s.data_path = t.required_path("data");
  s.scale = t.number("scale", s.scale);
  s.verbose = t.flag("toy-verbose", s.verbose);
  s.limit = t.integer("limit", 0, 1);
  if (cap > 0) s.limit = s.limit == 0 ? cap : std::min(s.limit, cap);
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    s.run = c.run, s.out_path = c.out_path;  // the toy needs no model
    c.fill_run(s);
    run_toy(s);
  });
}

}  // namespace

// The one statement that makes it a task.
const TaskRegistrar registered(TaskDef::records("toy", table_kind, build_result)
                                   .with_directions({{"toy_score", Direction::Higher}, {"toy_error", Direction::Lower}})
                                   .with_tolerances({{"toy_error", 0.25, 0}})
                                   .with_path_keys({"toy_file"})
                                   .with_information_flags({"--toy-verbose"})
                                   .with_suite_entry(read_suite_entry));

nlohmann::json run_toy(const ToySettings& s) {
  std::vector<double> numbers = read_numbers(s.data_path);
  if (s.limit > 0 && static_cast<int64_t>(numbers.size()) > s.limit) numbers.resize(s.limit);
  std::vector<WorkItem> items;
  for (size_t i = 0; i < numbers.size(); ++i) items.push_back({fmt::format("item_{}", i), 1.0});
  const nlohmann::json identity = {
      {"toy_file", s.data_path}, {"data_digest", digest_paths({s.data_path})}, {"scale", s.scale}, {"limit", s.limit}};
  RunnerSettings rs;
  rs.out_path = s.out_path;
  rs.resume = s.resume;
  rs.num_shards = s.num_shards;
  rs.shard_index = s.shard_index;
  rs.ranks = s.ranks;
  rs.progress_unit = "item";
  RecordRunner run(rs, "toy", identity, items);
  while (auto i = run.claim()) {
    const nlohmann::json record = {{"id", items[*i].id}, {"value", numbers[*i] * s.scale}};
    if (s.verbose) std::fprintf(stderr, "toy: %s\n", record.dump().c_str());
    run.finish(items[*i].id, record);
    if (run.should_stop()) run.interrupt();
  }
  return run.complete(build_result);
}

}  // namespace foxeval::toy
