// `foxeval merge`: the parts of a sharded run (any task's) into the result one run gives.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "tasks/run/output_lock.h"
#include "tasks/run/result_file.h"

namespace foxeval {
namespace {

CommandRegistrar merge_command([](CLI::App& root) {
  auto out = std::make_shared<std::string>();
  auto parts = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("merge", "Combine shard parts (loss, niah, longbench, lm-eval) into one result (exactly)");
  cmd->add_option("-o,--out", *out, "merged result JSON")->required();
  cmd->add_option("parts", *parts, "shard part files")->required();
  cmd->callback([out, parts] {
    const OutputLock lock(*out);  // one writer per --out, as every task run
    // Records or exact states alike: the task's registered builder or reducer (tasks/run/result_file.h).
    const nlohmann::json r = merge_task_parts(*parts, *out);
    std::printf("merged %zu parts of %s into %s\n", parts->size(), r["header"]["task"].get<std::string>().c_str(),
                out->c_str());
  });
});

}  // namespace
}  // namespace foxeval
