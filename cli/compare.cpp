// `foxeval compare A B [C ...] [--intersect] [--label L ...] [--format markdown|json] [-o FILE]`:
// B, C, ... against A, paired on the items both results hold (tasks/results/compare.h). A and B are
// result files, or folders of them (a suite's OUT/MODEL), paired by relative path.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/command_output.h"
#include "cli/validators.h"
#include "data/json_file.h"
#include "tasks/results/compare.h"
#include "tasks/results/results_table.h"

namespace foxeval {
namespace {

struct CompareArgs {
  std::vector<std::string> inputs, labels;
  std::string format = "markdown", out;
  CompareOptions options;
};

// A row label for an input: --label, else the model's (tasks/results/results_table.h), else its name.
std::string label_of(const std::string& input, const std::string& given) {
  if (!given.empty()) return given;
  if (std::filesystem::is_directory(input)) return std::filesystem::path(input).lexically_normal().filename().string();
  return results::model_label(read_json(input), input);
}

CommandRegistrar compare_command([](CLI::App& root) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* cmd = root.add_subcommand(
      "compare", "Paired comparison of results on the items they share: difference, 95% interval, better or worse");
  cmd->add_option("inputs", a->inputs, "result files (or folders of them): the first is the reference, each other is "
                                       "compared with it")
      ->required()
      ->expected(2, -1);
  cmd->add_flag("--intersect", a->options.intersect,
                "compare on the items both hold when their item sets differ (default: refuse)");
  cmd->add_option("--label", a->labels, "a name for each input, in order (repeat the flag; default: from the model)")
      ->allow_extra_args(false);
  cmd->add_option("--seed", a->options.seed, "the paired bootstrap's seed (Python's random.Random(seed))")
      ->capture_default_str();
  cmd->add_option("--resamples", a->options.resamples, "the paired bootstrap's resamples")
      ->check(CLI::Range(int64_t{100}, int64_t{10000000}))
      ->capture_default_str();
  cmd->add_option("--format", a->format, "markdown or json")->check(CLI::IsMember({"markdown", "json"}))->capture_default_str();
  cmd->add_option("-o,--out", a->out, "write the comparison to this file (atomically) instead of stdout");
  cmd->callback([a] {
    if (!a->labels.empty() && a->labels.size() != a->inputs.size())
      throw Error(fmt::format("--label: {} labels for {} inputs (one per input, in order, or none)", a->labels.size(),
                              a->inputs.size()));
    auto given = [&](size_t i) { return a->labels.empty() ? std::string() : a->labels[i]; };
    std::vector<FileComparison> all;
    std::vector<std::string> unpaired, skipped;
    for (size_t i = 1; i < a->inputs.size(); ++i) {
      const bool folders = std::filesystem::is_directory(a->inputs[0]);
      for (const auto& [fa, fb] : compare_pairs(a->inputs[0], a->inputs[i], &unpaired)) {
        // In folders, a result that keeps no per-item scores (inspect gates: pooled statistics; a
        // longbench folder's result.json, eval.py's format) is named and passed over; two files
        // given by name are compared or refused.
        if (folders) {
          const auto has_items = [](const std::string& f) {
            const nlohmann::json r = read_json(f);
            return r.is_object() && r.contains("per_item") && r["per_item"].is_object() && !r["per_item"].empty();
          };
          if (!has_items(fa) || !has_items(fb)) {
            skipped.push_back(has_items(fa) ? fb : fa);
            continue;
          }
        }
        // Two folders: name each side by its folder (its model), unless labelled.
        std::string la = folders ? label_of(a->inputs[0], given(0)) : label_of(fa, given(0));
        std::string lb = folders ? label_of(a->inputs[i], given(i)) : label_of(fb, given(i));
        if (la == lb) la += " (A)", lb += " (B)";
        all.push_back(compare_result_files(fa, fb, la, lb, a->options));
      }
    }
    for (const std::string& u : unpaired) std::fprintf(stderr, "foxeval compare: note: %s has no counterpart\n", u.c_str());
    for (const std::string& k : skipped)
      std::fprintf(stderr, "foxeval compare: note: %s keeps no per_item scores: not compared (inspect gates and "
                           "LongBench's result.json keep none; a result of an older foxeval: rerun it)\n", k.c_str());
    if (all.empty())
      throw Error(fmt::format("compare: no pair of results with per_item scores in {} and the other inputs", a->inputs[0]));
    const std::string text = a->format == "json" ? comparisons_json(all, a->options).dump(1) + "\n"
                                                 : render_comparisons_markdown(all, a->options);
    write_output(a->out, text);
  });
});

}  // namespace
}  // namespace foxeval
