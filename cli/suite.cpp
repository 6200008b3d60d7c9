// `foxeval suite run SUITE.yaml|--preset NAME -o OUT` and `foxeval suite check OUT --baseline OUT2`:
// a whole evaluation (models x tasks) in one command, and its check against a committed one. The
// work is in tasks/suite/; this file reads flags.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "cli/command.h"
#include "cli/path_roles.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/path_overlap.h"
#include "data/resources.h"
#include "tasks/run/distributed.h"
#include "tasks/suite/suite_check.h"
#include "tasks/suite/suite_plan.h"
#include "tasks/suite/suite_run.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

struct SuiteArgs {
  std::string file, preset, out, stop_after;
  std::vector<std::string> sets, models;
  int64_t cap = -1;
  bool resume = false;
  RunOptions run;
};

std::string preset_path(const std::string& name) {
  const std::string dir = find_resource({"the suite presets", "tasks/suite/presets", {"smoke.yaml"}, "FOXEVAL_SUITE_PRESETS", ""});
  const fs::path p = fs::path(dir) / (name + ".yaml");
  if (name.find('/') != std::string::npos || !fs::is_regular_file(p)) {
    std::string known;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".yaml") known += (known.empty() ? "" : ", ") + f.path().stem().string();
    throw Error(fmt::format("--preset {}: no such preset (known: {}; in {})", name, known, dir));
  }
  return p.string();
}

std::pair<std::string, std::string> key_value(const std::string& s, const std::string& flag) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    throw Error(fmt::format("{} {}: expected NAME=VALUE", flag, s));
  return {s.substr(0, eq), s.substr(eq + 1)};
}

void run_command(CLI::App* cmd, SuiteArgs& a) {
  if (a.file.empty() == a.preset.empty()) throw Error("give a suite file or --preset NAME (one of them)");
  suite::SuiteText text = suite::read_suite_text(a.file.empty() ? preset_path(a.preset) : a.file);
  std::map<std::string, std::string> vars;
  for (const std::string& s : a.sets) vars.insert(key_value(s, "--set"));
  suite::substitute_vars(text, vars);
  suite::PlanOverrides o;
  for (const std::string& m : a.models) o.models.push_back(key_value(m, "--model"));
  o.cap = a.cap;
  if (cmd->get_option("--device")->count() > 0) o.device = a.run.device;
  if (cmd->get_option("--dtype")->count() > 0) o.dtype = a.run.dtype;
  const suite::SuitePlan plan = suite::make_plan(text, o);
  a.run.device = plan.device;
  a.run.dtype = plan.dtype;
  if (cmd->get_option("--log-pruning-tolerance")->count() == 0) a.run.log_pruning_tolerance = plan.log_pruning_tolerance;
  refuse_output_over_input({{"--out", a.out}}, plan.inputs);

  suite::SuiteRunSettings s;
  s.out_dir = a.out;
  s.resume = a.resume;
  if (!a.stop_after.empty()) {
    const auto colon = a.stop_after.rfind(':');
    if (colon == std::string::npos) throw Error(fmt::format("--stop-after {}: expected LABEL/NAME:N", a.stop_after));
    s.stop_at = a.stop_after.substr(0, colon);
    s.stop_after = parse_int_list(a.stop_after.substr(colon + 1), "--stop-after").at(0);
  }
  // Rank 0 alone looks (the other ranks of a distributed run may find its first files already there).
  if (!a.resume && distributed_from_environment().rank == 0 && fs::is_directory(a.out) && !fs::is_empty(a.out))
    throw Error(fmt::format("--out {}: the folder holds files (an earlier suite run?): --resume continues it, or give "
                            "another folder",
                            a.out));
  // torchrun/srun/mpirun (or --nproc-per-node): every task is one run over all ranks (tasks/run/distributed.h).
  const ShardPlan shards = plan_shards("suite", -1, -1);
  resolve_run(cmd, a.run, shards.local_rank);
  s.run = a.run;
  s.ranks = shards.ranks;
  s.writes_outputs = shards.writes_result();
  run_task("suite run", shards.ranks, [&] { suite::run_suite(plan, s); });
}

CommandRegistrar suite_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "suite", "A whole evaluation (models x tasks) from a suite file, and its check");

  auto a = std::make_shared<SuiteArgs>();
  CLI::App* run = group->add_subcommand("run", "Run every task of a suite file (or preset) for every model: OUT/{label}/{task}.json, "
                                               "tables, report.html, suite.json");
  run->add_option("suite", a->file, "suite file (YAML, or .json); paths in it are relative to its folder");
  run->add_option("--preset", a->preset, "a bundled suite (tasks/suite/presets/NAME.yaml): smoke, paper, long-context");
  run->add_option("-o,--out", a->out, "the output folder")->required();
  run->add_option("--model", a->models, "LABEL=PATH (or LABEL=org/name): the models, instead of the file's (repeat the flag)")
      ->allow_extra_args(false);
  run->add_option("--set", a->sets, "NAME=VALUE: a ${NAME} of the file (its vars:), e.g. --set data=/abs/path (repeat)")
      ->allow_extra_args(false);
  run->add_option("--cap", a->cap, "at most N documents/records per task (lm-eval/longbench/babilong --limit, loss windows; "
                                   "default: the file's cap, else none)")
      ->check(int_range(0));
  run->add_flag("--resume", a->resume, "skip finished tasks; a task with a journal continues from it");
  run->add_option("--stop-after", a->stop_after,
                  "LABEL/NAME:N: stop (exit 3, resumable) after N items of that task (for testing resume)");
  add_run_options(run, a->run);
  run->callback([run, a] { run_command(run, *a); });

  auto out = std::make_shared<std::string>(), baseline = std::make_shared<std::string>();
  auto tols = std::make_shared<std::vector<std::string>>();
  auto fail_on = std::make_shared<std::string>("any");
  auto ignore_settings = std::make_shared<bool>(false);
  CLI::App* check = group->add_subcommand("check", "Check every result of a suite folder against a baseline suite folder "
                                                   "(exit codes as `foxeval check`)");
  check->add_option("out", *out, "a `foxeval suite run` folder")->required();
  check->add_option("--baseline", *baseline, "the baseline suite folder (e.g. results/baseline/suite-smoke)")->required();
  check->add_option("--tol", *tols, "METRIC=ABS: allowed |difference| for a metric ('*' matches any text); repeatable");
  check->add_option("--fail-on", *fail_on, "any: exit 1 on any change beyond tolerance; worse: only on a worsened metric")
      ->check(CLI::IsMember({"any", "worse"}))
      ->capture_default_str();
  check->add_flag("--ignore-settings", *ignore_settings, "compare even when a result's settings differ");
  check->callback([=] {
    CheckOptions opt;
    for (const std::string& t : *tols) {
      const auto [metric, value] = key_value(t, "--tol");
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(v >= 0)) throw Error(fmt::format("--tol {}: expected METRIC=ABS with ABS a number >= 0", t));
      opt.tolerances.emplace_back(metric, v);
    }
    const std::vector<suite::FileCheck> checks = suite::check_suite(*out, *baseline, opt);
    int moved = 0, worsened = 0, problems = 0, settings = 0;
    size_t metrics = 0;
    for (const suite::FileCheck& c : checks) {
      if (!c.problem.empty()) {
        ++problems;
        std::printf("%-44s %s\n", c.result.c_str(), c.problem.c_str());
        continue;
      }
      for (const auto& n : c.report.notes) std::fprintf(stderr, "foxeval suite check: %s: note: %s\n", c.result.c_str(), n.c_str());
      if (!c.report.settings_differ.empty()) {
        ++settings;
        std::printf("%-44s made with other settings (baseline vs result):\n", c.result.c_str());
        for (const auto& s : c.report.settings_differ) std::printf("    %s\n", s.c_str());
        if (!*ignore_settings) continue;
      }
      int m = 0, w = 0, p = 0;
      for (const CheckRow& r : c.report.rows) {
        if (r.ok) continue;
        ++m;
        p += !r.problem.empty();
        w += r.problem.empty() && r.change == Change::Worsened;
      }
      metrics += c.report.rows.size();
      moved += m, worsened += w, problems += p;
      std::printf("%-44s %zu metrics, %d out of tolerance (%d worsened)\n", c.result.c_str(), c.report.rows.size(), m, w);
      for (const CheckRow& r : c.report.rows) {
        if (r.ok) continue;
        const std::string name = r.position >= 0 ? fmt::format("{}[{}]", r.metric, r.position) : r.metric;
        std::printf("    %-40s %14.6g %14.6g %12.3g %10.3g  %s\n", name.c_str(), r.baseline, r.result, r.diff, r.tolerance,
                    check_status(r).c_str());
      }
    }
    std::printf("%zu results, %zu metrics checked: %d out of tolerance (%d worsened), %d results missing or extra or "
                "metrics missing, %d results made with other settings\n",
                checks.size(), metrics, moved, worsened, problems, settings);
    if (settings > 0 && !*ignore_settings) {
      std::fprintf(stderr, "refusing to compare results made with other settings; pass --ignore-settings to compare anyway\n");
      std::exit(2);
    }
    if (*fail_on == "any" ? moved + problems > 0 : worsened + problems > 0) std::exit(1);
  });
});

}  // namespace
}  // namespace foxeval
