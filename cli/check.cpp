// `foxeval check RESULT.json --baseline BASELINE.json [--tol METRIC=ABS ...] [--fail-on any|worse]`:
// exit 1 when a metric moved beyond its tolerance (or is missing or extra; with --fail-on worse only
// when one worsened by its direction, tasks/results/metric_direction.h), exit 2 when the two runs were made with
// different settings (unless --ignore-settings): models and data by their content digests, not
// their paths (tasks/results/check.h: compare_result_settings). See tasks/results/check.h for the default tolerances.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/results/check.h"

namespace foxeval {
namespace {

CommandRegistrar check_command([](CLI::App& root) {
  auto result = std::make_shared<std::string>();
  auto baseline = std::make_shared<std::string>();
  auto tols = std::make_shared<std::vector<std::string>>();
  auto opt = std::make_shared<CheckOptions>();
  auto ignore_settings = std::make_shared<bool>(false);
  auto verbose = std::make_shared<bool>(false);
  auto fail_on = std::make_shared<std::string>("any");
  CLI::App* cmd = root.add_subcommand("check", "Compare a result file with a baseline (exit 1 on regression)");
  cmd->add_option("result", *result, "result JSON (loss, niah, longbench, lm-eval)")->required();
  cmd->add_option("--baseline", *baseline, "baseline JSON (e.g. under results/baseline/)")->required();
  cmd->add_option("--tol", *tols, "METRIC=ABS: allowed |difference| for a metric ('*' matches any text); repeatable");
  cmd->add_option("--atol", opt->atol, "one absolute tolerance for every metric (default: none; each metric's own default tolerance)")
      ->check(non_negative_number());
  cmd->add_option("--rtol", opt->rtol, "one relative tolerance for every metric (with --atol; default: none)")
      ->check(non_negative_number());
  cmd->add_flag("--ignore-settings", *ignore_settings, "compare even when the runs' settings differ");
  cmd->add_flag("--all", *verbose, "print every metric, not only those out of tolerance");
  cmd->add_option("--fail-on", *fail_on,
                  "any: exit 1 on any change beyond tolerance (a deterministic harness's numbers should not move); "
                  "worse: only on a metric that worsened by its direction (comparing models), or one missing or extra")
      ->check(CLI::IsMember({"any", "worse"}))
      ->capture_default_str();
  cmd->callback([=] {
    for (const std::string& t : *tols) {
      const auto eq = t.rfind('=');
      double v = 0;
      try {
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument(t);
        size_t used = 0;
        v = std::stod(t.substr(eq + 1), &used);
        if (used != t.size() - eq - 1 || !std::isfinite(v) || v < 0) throw std::invalid_argument(t);
      } catch (const std::exception&) {
        throw Error(fmt::format("--tol {}: expected METRIC=ABS with ABS a number >= 0", t));
      }
      opt->tolerances.emplace_back(t.substr(0, eq), v);
    }
    const CheckReport report = check_against_baseline(*result, *baseline, *opt);
    for (const auto& n : report.notes) std::fprintf(stderr, "foxeval check: note: %s\n", n.c_str());
    if (!report.settings_differ.empty()) {
      std::fprintf(stderr, "foxeval check: %s and %s were made with different settings (baseline vs result):\n",
                   baseline->c_str(), result->c_str());
      for (const auto& s : report.settings_differ) {
        // Models and data are compared by content: say which one differs in words.
        const std::string key = s.substr(0, s.find(':'));
        const bool model = key == "model_digest";
        const bool data = !model && (key.find("digest") != std::string::npos || key.rfind("data", 0) == 0);
        std::fprintf(stderr, "  %s%s\n", s.c_str(),
                     model  ? "  (other model: its weights, config or tokenizer files differ)"
                     : data ? "  (other data: the files read differ)"
                            : "");
      }
      if (!*ignore_settings) {
        std::fprintf(stderr, "refusing to compare; pass --ignore-settings to compare anyway\n");
        std::exit(2);
      }
    }
    int moved = 0, improved = 0, worsened = 0, changed = 0, problems = 0;
    for (const auto& r : report.rows) {
      if (r.ok) continue;
      ++moved;
      problems += !r.problem.empty();
      if (r.problem.empty()) {
        improved += r.change == Change::Improved;
        worsened += r.change == Change::Worsened;
        changed += r.change == Change::Changed;
      }
    }
    if (moved || *verbose) {
      std::printf("%-40s %14s %14s %12s %10s  %s\n", "metric", "baseline", "now", "difference", "tolerance", "status");
      for (const auto& r : report.rows) {
        if (r.ok && !*verbose) continue;
        // A per-position curve names the element shown: the one that worsened most.
        const std::string name = r.position >= 0 ? fmt::format("{}[{}]", r.metric, r.position) : r.metric;
        std::printf("%-40s %14.6g %14.6g %12.3g %10.3g  %s\n", name.c_str(), r.baseline, r.result, r.diff, r.tolerance,
                    check_status(r).c_str());
      }
    }
    std::printf("%zu metrics checked, %d out of tolerance (%d improved, %d worsened, %d changed without a direction, "
                "%d missing or extra)\n",
                report.rows.size(), moved, improved, worsened, changed, problems);
    if (*fail_on == "any" ? moved > 0 : worsened + problems > 0) std::exit(1);
  });
});

}  // namespace
}  // namespace foxeval
