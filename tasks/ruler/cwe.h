// RULER's common words extraction (ruler_cwe) generated as lm-eval 0.4.13's cwe_utils.py does:
// numbered word lists where ten words repeat most, words drawn with the shared CPython `random`
// stream and lists shuffled by the module's own random.Random(42), which lives across lengths
// (CweState holds it and the word list it shuffled at import).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/python/python_random.h"
#include "tasks/ruler/niah.h"

namespace foxeval::ruler {

struct CweRepeats {
  int example_words = 0, example_common = 0, example_uncommon = 0, common = 0, uncommon = 0;
};

struct CweDefinition {
  std::string template_text, answer_prefix;
  uint64_t module_seed = 42;
  int num_samples = 500, tokens_to_generate = 120, incremental = 10, num_common = 10;
  int64_t short_below = 4096;
  CweRepeats short_lengths, long_lengths;
};

CweDefinition load_cwe_definition(const std::string& ruler_tasks_json);

// cwe_utils at import: RNG = random.Random(42); WORDS = sorted(set(nouns + adjectives + verbs)),
// then RNG.shuffle(WORDS).
struct CweState {
  PythonRandom module_rng;
  std::vector<std::string> words;
  CweState(const CweDefinition& def, const std::vector<std::string>& nouns, const std::vector<std::string>& adjectives,
           const std::vector<std::string>& verbs);
};

// get_dataset(tokenizer, seq=max_seq_length). foxeval::Error where lm-eval raises or would loop
// forever (nothing fits the length).
std::vector<RulerDoc> cwe_samples(const CweDefinition& def, CweState& state, const TokenCounter& count_tokens,
                                  int64_t max_seq_length, PythonRandom& rng);

}  // namespace foxeval::ruler
