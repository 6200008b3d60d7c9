// --log-pruning-tolerance (RunOptions::log_pruning_tolerance): the checkpoint's setting by
// default, overridden by a number, turned off by "none", a clear error otherwise; what a task
// records in its identity (model_identity). Its effect on the numbers is a GPU measurement
// (results/bench/): the exact CPU path never prunes.
#include <doctest/doctest.h>

#include "models/registry.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tests/test_support.h"

using namespace foxeval;

TEST_CASE("pruning option: checkpoint default, override, none, and bad values") {
  const std::string dir = test::source_path("tests/fixtures/official/fox_pro");  // log_pruning_tolerance: null
  auto plain = load_model(dir, RunOptions{"cpu", "float32", ""});
  CHECK(!model_identity(plain).contains("log_pruning_tolerance"));
  auto on = load_model(dir, RunOptions{"cpu", "float32", "-10"});
  CHECK(model_identity(on).at("log_pruning_tolerance") == "-10");
  auto off = load_model(dir, RunOptions{"cpu", "float32", "none"});
  CHECK(!model_identity(off).contains("log_pruning_tolerance"));
  CHECK_THROWS_WITH(load_model(dir, RunOptions{"cpu", "float32", "-1x"}),
                    doctest::Contains("--log-pruning-tolerance -1x: not a number"));
  CHECK_THROWS_WITH(load_model(dir, RunOptions{"cpu", "float32", "nan"}), doctest::Contains("not a number"));
  // The exact CPU path never prunes: same hidden states with and without.
  at::Tensor ids = at::arange(1, 40, at::kLong).view({1, -1});
  CHECK(at::equal(on->forward(ids, nullptr), plain->forward(ids, nullptr)));
}
