// header.pruning (tasks/run/pruning_header.h): absent with pruning off, present with the counts and the
// fraction skipped with it on, summed over shard parts by merge; and RunOptions::fgate_bias_shift
// (the gate levels of `foxeval bench pruning`), which moves every forget-gate logit by the shift.
#include <ATen/ATen.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <cmath>
#include <fstream>

#include "data/errors.h"
#include "data/json_file.h"
#include "models/registry.h"
#include "tasks/run/pruning_header.h"
#include "tasks/run/runner.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

namespace foxeval {
namespace {

using test::error_of;
using test::TempDir;

nlohmann::json build_count(const nlohmann::json&, const std::vector<nlohmann::json>& records) {
  return {{"n", records.size()}};
}
ResultBuilderRegistrar register_pruning_test_task("pruning-header-test", build_count);

// A model that only reports fixed pruning counts (the CUDA kernels' counts, as if a GPU run made them).
class CountsOnly : public CausalLM {
 public:
  explicit CountsOnly(PruningStats s) : stats_(s) {}
  const ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor&, DecodeState*) override { throw Error("not a model"); }
  std::unique_ptr<DecodeState> new_state(int64_t, const at::Tensor&) override { throw Error("not a model"); }
  const at::Tensor& lm_head() const override { return head_; }
  const RunOptions& options() const override { return options_; }
  PruningStats pruning_stats() const override { return stats_; }

 private:
  PruningStats stats_;
  ModelInfo info_;
  RunOptions options_;
  at::Tensor head_;
};

nlohmann::json run_items(const std::string& out, const CausalLM* model, int64_t shards = 1, int64_t index = 0) {
  RunnerSettings rs;
  rs.out_path = out;
  rs.num_shards = shards;
  rs.shard_index = index;
  rs.stats = {pruning_stats(model)};
  RecordRunner run(rs, "pruning-header-test", {{"mode", "x"}}, {{"a", 1}, {"b", 1}, {"c", 1}});
  for (size_t i : run.todo()) run.finish(run.items()[i].id, {{"v", 1}});
  return run.complete(build_count);
}

PruningStats gpu_like_counts() {
  PruningStats s;
  s.on = true;
  s.log_tolerance = -5;
  s.key_blocks = 100;
  s.key_blocks_skipped = 25;
  s.decode_keys = 10;
  s.decode_keys_skipped = 4;
  return s;
}

}  // namespace

// A run statistic only this file knows, to show merge sums any registered kind (not "pruning" by name).
const bool test_counter_registered = register_run_stats_kind(
    {"test_counter",
     [](const nlohmann::json& a, const nlohmann::json& b) { return a.is_null() ? b : nlohmann::json(a.get<int>() + b.get<int>()); },
     [](const nlohmann::json& sum) { return nlohmann::json{{"sum", sum}}; }});

TEST_CASE("header.pruning: absent with pruning off, the tolerance and a null fraction on the exact CPU path") {
  TempDir dir("pruning_header");
  const std::string fox = test::source_path("tests/fixtures/official/fox_pro");  // log_pruning_tolerance: null
  auto off = load_model(fox, RunOptions{"cpu", "float32", ""});
  CHECK(!off->pruning_stats().on);
  const nlohmann::json r_off = run_items((dir.path / "off.json").string(), off.get());
  CHECK(!r_off.at("header").contains("pruning"));
  CHECK(!run_items((dir.path / "none.json").string(), nullptr).at("header").contains("pruning"));

  auto on = load_model(fox, RunOptions{"cpu", "float32", "-10"});
  (void)on->forward(at::arange(1, 30, at::kLong).view({1, -1}), nullptr);  // the torch path: nothing counted
  const nlohmann::json r_on = run_items((dir.path / "on.json").string(), on.get());
  REQUIRE(r_on.at("header").contains("pruning"));
  const nlohmann::json& p = r_on["header"]["pruning"];
  CHECK(p.at("log_tolerance") == -10.0);
  CHECK(p.at("key_blocks") == 0);
  CHECK(p.at("key_blocks_skipped") == 0);
  CHECK(p.at("skipped_fraction").is_null());
  CHECK(!p.contains("decode_keys"));
  CHECK(p.at("counted").get<std::string>().find("torch path") != std::string::npos);
  // What was written is what complete() returned.
  CHECK(read_json((dir.path / "on.json").string()).at("header").at("pruning") == p);
}

TEST_CASE("header.pruning: the kernels' counts and fractions; shard parts add up in merge") {
  TempDir dir("pruning_header");
  const CountsOnly model(gpu_like_counts());
  const nlohmann::json one = run_items((dir.path / "one.json").string(), &model);
  const nlohmann::json& p = one.at("header").at("pruning");
  CHECK(p.at("log_tolerance") == -5.0);
  CHECK(p.at("key_blocks") == 100);
  CHECK(p.at("key_blocks_skipped") == 25);
  CHECK(p.at("skipped_fraction").get<double>() == doctest::Approx(0.25));
  CHECK(p.at("decode_keys") == 10);
  CHECK(p.at("decode_skipped_fraction").get<double>() == doctest::Approx(0.4));

  // Two shards, each process with its own counts: the merged header has their sum.
  std::vector<std::string> parts;
  for (int s = 0; s < 2; ++s) {
    parts.push_back((dir.path / ("part" + std::to_string(s) + ".json")).string());
    const nlohmann::json part = run_items(parts.back(), &model, 2, s);
    CHECK(part.at("pruning").at("key_blocks") == 100);
  }
  const nlohmann::json merged = merge_task_parts(parts, (dir.path / "merged.json").string());
  CHECK(merged.at("header").at("pruning").at("key_blocks") == 200);
  CHECK(merged.at("header").at("pruning").at("key_blocks_skipped") == 50);
  CHECK(merged.at("header").at("pruning").at("skipped_fraction").get<double>() == doctest::Approx(0.25));

  // A part without counts beside one with them: refused, not a silently smaller count.
  const std::string plain = (dir.path / "plain1.json").string();
  (void)run_items(plain, nullptr, 2, 1);
  CHECK(error_of<Error>([&] { merge_task_parts({parts[0], plain}, (dir.path / "m.json").string()); })
            .find("1 of 2 parts carry pruning counts") != std::string::npos);
  // A damaged count names the field and the file.
  nlohmann::json bad = read_json(parts[1]);
  bad["pruning"]["key_blocks"] = -3;
  const std::string bad_path = (dir.path / "bad1.json").string();
  std::ofstream(bad_path) << bad.dump();
  const std::string err = error_of<Error>([&] { merge_task_parts({parts[0], bad_path}, (dir.path / "m.json").string()); });
  CHECK(err.find("bad1.json") != std::string::npos);
  CHECK(err.find("key_blocks must be a non-negative integer") != std::string::npos);

  // merge knows no statistic by name: any registered kind adds up the same way (here a test's own).
  std::vector<std::string> counted;
  for (int s = 0; s < 2; ++s) {
    nlohmann::json part = read_json(parts[s]);
    part["test_counter"] = 3 + s;
    counted.push_back((dir.path / ("counted" + std::to_string(s) + ".json")).string());
    std::ofstream(counted.back()) << part.dump();
  }
  const nlohmann::json both = merge_task_parts(counted, (dir.path / "counted.json").string());
  CHECK(both.at("header").at("test_counter") == nlohmann::json{{"sum", 7}});
  CHECK(both.at("header").at("pruning").at("key_blocks") == 200);
  CHECK(error_of<Error>([&] { merge_task_parts({counted[0], parts[1]}, (dir.path / "m.json").string()); })
            .find("1 of 2 parts carry test_counter counts") != std::string::npos);
}

TEST_CASE("pruning counts: add up, refuse other tolerances and impossible counts") {
  const nlohmann::json a = pruning_counts(gpu_like_counts());
  CHECK(add_pruning_counts(nullptr, nullptr).is_null());
  CHECK(add_pruning_counts(a, nullptr) == a);
  CHECK(add_pruning_counts(nullptr, a) == a);
  CHECK(add_pruning_counts(a, a).at("decode_keys_skipped") == 8);
  nlohmann::json other = a;
  other["log_tolerance"] = -10.0;
  CHECK(error_of<Error>([&] { add_pruning_counts(a, other); }).find("do not add up") != std::string::npos);
  nlohmann::json more = a;
  more["key_blocks_skipped"] = 101;
  CHECK(error_of<Error>([&] { pruning_header(more); }).find("more skipped than in range") != std::string::npos);
  CHECK(pruning_counts(PruningStats{}).is_null());
}

namespace {
// The log forget gates of layer 0 that a forward computes.
struct GateCapture : ForwardCapture {
  at::Tensor lf;
  void log_decay(int64_t layer, const at::Tensor& log_decay) override {
    if (layer == 0) lf = log_decay.clone();
  }
};
}  // namespace

TEST_CASE("fgate_bias_shift moves every forget-gate logit by the shift (bench pruning's gate levels)") {
  const std::string fox = test::source_path("tests/fixtures/official/fox_pro");
  at::Tensor ids = at::arange(1, 40, at::kLong).view({1, -1});
  auto logits_of = [&](double shift) {
    RunOptions run{"cpu", "float32", ""};
    run.fgate_bias_shift = shift;
    auto model = load_model(fox, run);
    GateCapture cap;
    model->set_capture(&cap);
    (void)model->forward(ids, nullptr);
    REQUIRE(cap.lf.defined());
    const at::Tensor lf = cap.lf.to(at::kDouble);  // log f = log sigmoid(z): z = log f - log(1 - f)
    return (lf - at::log(-at::expm1(lf))).clone();
  };
  const at::Tensor z0 = logits_of(0.0), z3 = logits_of(3.0), zm = logits_of(-2.0);
  CHECK((z3 - z0 - 3.0).abs().max().item<double>() < 1e-3);
  CHECK((zm - z0 + 2.0).abs().max().item<double>() < 1e-3);
}

}  // namespace foxeval
