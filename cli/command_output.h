// What several commands do with their output the same way: text to --out or stdout, the line a
// shard's run ends with, and the score-against-length plot commands of the generation tasks.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace foxeval {

// `text` to the file `out` (atomically), or to stdout when `out` is "".
void write_output(const std::string& out, const std::string& text);

// After a task's run: with num_shards > 1, says that shard_index's part is written and how to
// combine the parts (`then`: a further step, e.g. "`foxeval longbench export`"), and returns true.
bool report_shard_part(int64_t shard_index, int64_t num_shards, const std::string& then = "");

// `foxeval plot NAME FILES... -o OUT [--label L]... [--task WHAT]`: draw(files, labels, what, out).
using ScorePlot = std::function<void(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                                     const std::string& what, const std::string& out)>;
void add_score_plot_command(CLI::App& root, const std::string& name, const std::string& about,
                            const std::string& files_help, const std::string& task_help, ScorePlot draw);

}  // namespace foxeval
