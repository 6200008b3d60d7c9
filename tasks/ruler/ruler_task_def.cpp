// `ruler`'s definition (tasks/task_def.h): what table, check, merge, identity and suite know of it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tasks/ruler/ruler_run.h"
#include "tasks/ruler/ruler_samples.h"
#include "tasks/ruler/ruler_table.h"
#include "tasks/task_def.h"

namespace foxeval::ruler {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval ruler run` (flags without "--"; haystack,
// words, punkt: folders, or absent (haystack: also hf) for the Hugging Face caches' essays and the
// installed packages' lists, as the command). The suite's cap is --limit (docs of each task at each length).
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
  RunSettings s;
  s.samples.haystack_dir = t.path_or("haystack", "hf", "");
  if (s.samples.haystack_dir == "hf") s.samples.haystack_dir = "";  // the command's default: the HF caches
  s.samples.words_dir = t.path("words");
  s.samples.punkt_dir = t.path("punkt");
  s.samples.tasks = t.texts("tasks");
  // A misspelled task stops the suite before any model loads (the command would stop at its docs).
  const std::vector<std::string> known = available_tasks();
  for (const std::string& task : s.samples.tasks)
    if (std::find(known.begin(), known.end(), task) == known.end())
      t.fail("tasks", fmt::format("'{}' is not a RULER task this build generates ({})", task, fmt::join(known, ", ")));
  s.samples.lengths = t.integers("lengths");
  for (int64_t l : s.samples.lengths)
    if (l < 1) t.fail("lengths", fmt::format("{}: a length is a number of tokens >= 1", l));
  s.limit = t.integer("limit", 0, 1);
  if (cap > 0) s.limit = s.limit == 0 ? cap : std::min(s.limit, cap);
  s.max_length = t.integer("max-length", 0, 2, int64_t(1) << 20);
  s.max_gen_toks = t.integer("max-gen-toks", 0, 1, int64_t(1) << 20);
  s.generation.max_batch = t.integer("batch-size", s.generation.max_batch, 1, 1 << 20);
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    s.samples.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    c.fill_run(s);
    s.stop_after = c.stop_after > 0 ? c.stop_after : -1;
    run_ruler(s);
  });
}

}  // namespace

// lm-eval's string_match_all / string_match_part (higher is better): per task and length, the
// group's mean per length, the categories (NIAH, multi-hop tracing, aggregation, QA) per length.
// The data's bytes are in the identity through the samples' digest: where they lie is information.
const TaskRegistrar registered(
    TaskDef::records("ruler", table_kind, build_result)
        .with_directions({{"scores/*", Direction::Higher}, {"ruler/*", Direction::Higher}, {"categories/*", Direction::Higher}})
        .with_information_flags({"--haystack", "--words", "--punkt", "--squad", "--hotpot"})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::ruler
