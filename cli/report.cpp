// `foxeval report RESULT... -o report.html`: one self-contained HTML page (the tables, each
// task's figures, every result's header), no network needed to view it.
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/validators.h"
#include "tasks/results/report.h"
#include "tasks/result_kind.h"

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
  cmd->add_option("files", a->files, "result JSON files of any mix of tasks (" + results::registered_tasks() + ")")
      ->required();
  cmd->add_option("-o,--out", a->out, "the HTML file to write")->required();
  cmd->add_option("--label", a->labels,
                  "row label of each file, in order, or FILE=LABEL for some files (repeat the flag; default: from the model)")
      ->allow_extra_args(false);
  cmd->add_option("--title", a->opts.title, "page title")->capture_default_str();
  cmd->add_flag("--stderr", a->opts.show_stderr, "show each cell's standard error (value ± stderr) where its result keeps one");
  cmd->add_option("--train-length,--niah-train-length", a->opts.train_length,
                  "the training context length, a dashed line in figures over context lengths such as the heatmaps "
                  "(default 0: none)")
      ->check(int_range(0, kMaxContextTokens));
  cmd->callback([a] { report::write_report(a->files, a->labels, a->out, a->opts); });
});

}  // namespace
}  // namespace foxeval
