// `foxeval toy run`: the toy task's one cli file (tests/toy_task/toy_task.h), as a task's cli/ file.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/run_options.h"
#include "tests/toy_task/toy_task.h"

namespace foxeval {
namespace {

CommandRegistrar toy_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "toy", "A toy task (tests/toy_task/)");
  CLI::App* cmd = group->add_subcommand("run", "Scale each number of --data; their mean and error");
  auto s = std::make_shared<toy::ToySettings>();
  auto shards = std::make_shared<ShardArgs>();
  cmd->add_option("--data", s->data_path, "numbers, one a line")->required();
  cmd->add_option("-o,--out", s->out_path, "result JSON (a shard part when --num-shards > 1)")->required();
  cmd->add_option("--scale", s->scale, "multiplies every number");
  cmd->add_option("--limit", s->limit, "the first N numbers only (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--toy-verbose", s->verbose, "print each record (changes no number)");
  add_run_options(cmd, s->run, false);
  add_shard_options(cmd, *shards, "items", "journal (OUT.journal.jsonl)");
  cmd->callback([cmd, s, shards] {
    resolve_task_settings(cmd, "toy", *shards, *s);
    // No model to announce the run: say the settings the announcement would carry.
    std::fprintf(stderr, "toy: %s\n", s->run.settings.empty() ? "no settings" : s->run.settings.c_str());
    nlohmann::json result;
    run_task("toy run", s->ranks, [&] { result = toy::run_toy(*s); },
             [&] {
               if (result.contains("toy_score")) std::printf("toy_score\t%.6f\n", result["toy_score"].get<double>());
               else std::printf("part written to %s\n", s->out_path.c_str());  // a shard's: `foxeval merge`
             });
  });
});

}  // namespace
}  // namespace foxeval
