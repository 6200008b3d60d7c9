// `foxeval check RESULT.json --baseline BASELINE.json`: exit 1 when a metric regressed.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "cli/command.h"
#include "tasks/check.h"

namespace foxeval {
namespace {

CommandRegistrar check_command([](CLI::App& root) {
  auto result = std::make_shared<std::string>();
  auto baseline = std::make_shared<std::string>();
  auto atol = std::make_shared<double>(1e-4);
  auto rtol = std::make_shared<double>(0.0);
  CLI::App* cmd = root.add_subcommand("check", "Compare a result file with a baseline (exit 1 on regression)");
  cmd->add_option("result", *result, "result JSON")->required();
  cmd->add_option("--baseline", *baseline, "baseline JSON (e.g. under results/)")->required();
  cmd->add_option("--atol", *atol, "allowed absolute difference (default 1e-4)");
  cmd->add_option("--rtol", *rtol, "allowed difference relative to the baseline (default 0)");
  cmd->callback([=] {
    auto rows = check_against_baseline(*result, *baseline, *atol, *rtol);
    int failed = 0;
    std::printf("%-28s %14s %14s %12s  %s\n", "metric", "baseline", "result", "diff", "status");
    for (const auto& r : rows) {
      failed += !r.ok;
      const std::string status = r.ok ? "ok" : (r.problem.empty() ? "REGRESSED" : r.problem);
      std::printf("%-28s %14.6f %14.6f %12.3g  %s\n", r.metric.c_str(), r.baseline, r.result, r.diff, status.c_str());
    }
    std::printf("%zu checked, %d failed\n", rows.size(), failed);
    if (failed) std::exit(1);
  });
});

}  // namespace
}  // namespace foxeval
