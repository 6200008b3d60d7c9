#include "cli/command_output.h"

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "data/json_file.h"

namespace foxeval {

void write_output(const std::string& out, const std::string& text) {
  if (out.empty())
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_text_atomic(out, text);
}

bool report_shard_part(int64_t shard_index, int64_t num_shards, const std::string& then) {
  if (num_shards <= 1) return false;
  std::printf("shard %lld of %lld written; combine the parts with `foxeval merge`%s\n", static_cast<long long>(shard_index),
              static_cast<long long>(num_shards), then.empty() ? "" : (", then " + then).c_str());
  return true;
}

void add_score_plot_command(CLI::App& root, const std::string& name, const std::string& about,
                            const std::string& files_help, const std::string& task_help, ScorePlot draw) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto labels = std::make_shared<std::vector<std::string>>();
  auto what = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* group = command_group(root, "plot", "Draw result files");
  CLI::App* cmd = group->add_subcommand(name, about);
  cmd->add_option("files", *files, files_help)->required();
  cmd->add_option("-o,--out", *out, "output SVG file")->required();
  cmd->add_option("--label", *labels, "legend label of each file, in order (repeat the flag)")->allow_extra_args(false);
  cmd->add_option("--task", *what, task_help);
  cmd->callback([=] { draw(*files, *labels, *what, *out); });
}

}  // namespace foxeval
