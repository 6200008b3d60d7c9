// `foxeval report RESULT... -o report.html`: one self-contained HTML page (tables, loss curves,
// NIAH heatmaps, LongBench per task, every result's header), no network needed to view it.
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/report.h"

namespace foxeval {
namespace {

struct ReportArgs {
  std::vector<std::string> files, labels;
  std::string out;
  report::ReportOptions opts;
};

CommandRegistrar report_command([](CLI::App& root) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand("report", "One self-contained HTML page over result files of any task");
  cmd->add_option("files", a->files, "result JSON files of `foxeval loss|niah|longbench|lm-eval` (any mix)")->required();
  cmd->add_option("-o,--out", a->out, "the HTML file to write")->required();
  cmd->add_option("--label", a->labels, "row label of each file, in order (repeat the flag; default: from the model)")
      ->allow_extra_args(false);
  cmd->add_option("--title", a->opts.title, "page title")->capture_default_str();
  cmd->add_option("--niah-train-length", a->opts.niah_train_length,
                  "draw a dashed line in the NIAH heatmaps past this context length (the training length)")
      ->check(int_range(0, kMaxContextTokens));
  cmd->callback([a] { report::write_report(a->files, a->labels, a->out, a->opts); });
});

}  // namespace
}  // namespace foxeval
