// `foxeval table RESULT... [--format markdown|latex|csv] [-o FILE] [--label L ...] [--stderr]`: the
// paper's tables from any mix of result files (every task registered in tasks/result_kind.h), one row
// per model, with each column's n (items) where the results keep per-item scores.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/command_output.h"
#include "data/json_file.h"
#include "tasks/result_kind.h"
#include "tasks/results/results_table.h"

namespace foxeval {
namespace {

struct TableArgs {
  std::vector<std::string> files, labels;
  std::string format = "markdown", out;
  bool stderr_ = false;
};

CommandRegistrar table_command([](CLI::App& root) {
  auto a = std::make_shared<TableArgs>();
  CLI::App* cmd = root.add_subcommand(
      "table", "The paper's tables from result files of any task: best bold, second underlined, among comparable rows");
  cmd->add_option("files", a->files, "result JSON files of any mix of tasks (" + results::registered_tasks() + ")")
      ->required();
  cmd->add_option("--format", a->format, "markdown, latex or csv")
      ->capture_default_str()
      ->type_name("{markdown,latex,csv}");  // help lists the choices; parse_format refuses others, listing them
  cmd->add_option("-o,--out", a->out, "write the tables to this file (atomically) instead of stdout");
  cmd->add_option("--label", a->labels,
                  "row label of each file, in order, or FILE=LABEL for some files (repeat the flag; default: from the "
                  "model; two results filling one cell get rows of their own, the later one suffixed ' (2)')")
      ->allow_extra_args(false);
  cmd->add_flag("--stderr", a->stderr_, "show each cell's standard error (value ± stderr) where its result keeps one");
  cmd->callback([a] {
    write_output(a->out, results::table_from_files(a->files, a->labels, results::parse_format(a->format), a->stderr_));
  });
});

}  // namespace
}  // namespace foxeval
