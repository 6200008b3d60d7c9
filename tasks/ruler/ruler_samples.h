// `foxeval ruler samples`: RULER's docs for a task list and lengths, written as JSONL (one
// {"task", "doc_id", "doc"} a line, the doc as lm-eval's --log_samples writes it), without a model.
// The tasks are generated in the order given from one random stream seeded as lm-eval's
// simple_evaluate seeds it, so a task's docs equal lm-eval's for the same task list.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "tasks/ruler/niah.h"

namespace foxeval::ruler {

struct SamplesSettings {
  std::string model_dir;     // its tokenizer sizes the haystacks ("" = the bundled GPT-2 files)
  std::string haystack_dir;  // folder of .txt essays ("" = baber/paul_graham_essays from the HF caches)
  std::string words_dir;     // wonderwords' lists ("" = the installed package's)
  std::string punkt_dir;     // punkt_tab/english ("" = nltk's search roots)
  std::string squad_path;    // dev-v2.0.json or its folder ("" = $FOXEVAL_RULER_DATA, ~/.cache/foxeval/ruler)
  std::string hotpot_path;   // hotpot_dev_distractor_v1.json or its folder (the same default places)
  std::vector<std::string> tasks;  // empty = available_tasks(), in the group's order
  std::vector<int64_t> lengths;    // empty = lm-eval's default (4096)
  std::string out_path;
};

// ruler_tasks.json (the definitions), found as a resource ($FOXEVAL_RULER_DIR, the source tree, ...).
std::string ruler_tasks_path();

// The tasks this build generates, in the group's order (ruler.yaml): all 13.
std::vector<std::string> available_tasks();

// Generates every task at every length (lengths in the order given, as lm-eval's generators loop)
// and returns the docs, in order, as {"task", "doc_id", "doc"} objects; foxeval::Error naming the
// flag or file for bad input.
std::vector<std::pair<std::string, RulerDoc>> generate_samples(const SamplesSettings& s);
// The same with the tokenizer given (a run's: its model's, resolved once), not loaded from s.model_dir.
std::vector<std::pair<std::string, RulerDoc>> generate_samples(const SamplesSettings& s, const Gpt2Tokenizer& tok);

// generate_samples + the JSONL file (written atomically); prints per task and length the count.
void write_samples(const SamplesSettings& s);

}  // namespace foxeval::ruler
