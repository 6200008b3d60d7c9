// `foxeval plot loss RESULT.json... -o FIG.svg`: per-token loss against token position.
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/loss/loss_plot.h"

namespace foxeval {
namespace {

struct PlotLossArgs {
  std::vector<std::string> files, labels;
  std::string out;
  PlotOptions opts;
  double ymin = 0, ymax = 0;
  int64_t train_length = 0;
};

CommandRegistrar plot_loss_command([](CLI::App& root) {
  auto a = std::make_shared<PlotLossArgs>();
  CLI::App* group = command_group(root, "plot", "Draw result files");
  CLI::App* cmd = group->add_subcommand("loss", "Per-token loss against token position (log-scale x), as an SVG");
  cmd->add_option("files", a->files, "result JSON files written by `foxeval loss`")->required();
  cmd->add_option("-o,--out", a->out, "output SVG file")->required();
  cmd->add_option("--label", a->labels, "legend label of each file, in order (repeat the flag)")
      ->allow_extra_args(false);
  cmd->add_option("--title", a->opts.title, "figure title");
  CLI::Option* ymin = cmd->add_option("--ymin", a->ymin, "bottom of the loss axis (default: from the data)");
  CLI::Option* ymax = cmd->add_option("--ymax", a->ymax, "top of the loss axis (default: from the data)");
  cmd->add_option("--bins", a->opts.bins, "log-spaced smoothing bins over the positions")
      ->check(int_range(1, 100000));
  CLI::Option* train = cmd->add_option("--train-length", a->train_length,
                                       "draw the training context length as a dashed line (e.g. 16384)")
                           ->check(int_range(1, kMaxContextTokens));
  cmd->callback([a, ymin, ymax, train] {
    if (train->count() > 0) a->opts.train_length = static_cast<double>(a->train_length);
    if (ymin->count() > 0) a->opts.ymin = a->ymin;
    if (ymax->count() > 0) a->opts.ymax = a->ymax;
    plot_loss_files(a->files, a->labels, a->out, a->opts);
  });
});

}  // namespace
}  // namespace foxeval
