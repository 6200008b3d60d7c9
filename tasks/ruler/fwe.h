// RULER's frequent words extraction (ruler_fwe) generated as lm-eval 0.4.13's fwe_utils.py does:
// a coded text of random six-letter words repeated with Zipf counts (num_words * k**-2 / zeta(2),
// truncated), the vocabulary drawn from the shared CPython `random` stream, the text shuffled by a
// fresh random.Random(42).
//
// Machine dependency: NumPy evaluates k**-2.0 with its SIMD power where the CPU has AVX-512
// (SVML; NumPy 2.4.6: 1 ulp off the correctly rounded value for 198 of k = 1..3000), else with
// libm pow (glibc: off for k = 1253, 2506, 2801; NumPy run with NPY_DISABLE_CPU_FEATURES="X86_V4
// AVX512_ICL AVX512_SPR" gives exactly these). foxeval computes the correctly rounded
// 1 / (k * k). The truncated counts equal NumPy's on both kinds of machine for every
// num_words <= kFweVerifiedWords (tests/tools/ruler_fwe_power_check.py tries each one against
// every k that differs); beyond it, foxeval refuses rather than guess.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/python/python_random.h"
#include "tasks/ruler/niah.h"

namespace foxeval::ruler {

inline constexpr int64_t kFweVerifiedWords = 2000000;

struct FweDefinition {
  std::string template_text, answer_prefix, noise_word;
  uint64_t seed = 42;
  int num_samples = 500, tokens_to_generate = 50, coded_wordlen = 6, num_answers = 3;
  int64_t vocab_per_tokens = 50, incremental_per_tokens = 32;
  double alpha = 2.0;
};

// The "fwe" part of ruler_tasks.json; foxeval::Error naming the file and field.
FweDefinition load_fwe_definition(const std::string& ruler_tasks_json);

// The words' counts gen_text makes: (num_words * k**-alpha / zeta(alpha)).astype(int) for
// k = 1..vocab_size, alpha = 2 (the only exponent lm-eval uses; another is refused).
std::vector<int64_t> fwe_counts(int64_t num_words, size_t vocab_size, double alpha);

// get_dataset(tokenizer, max_seq_length). foxeval::Error for a length too short for lm-eval's
// loop to end (max_seq_length < 32) or past the verified counts.
std::vector<RulerDoc> fwe_samples(const FweDefinition& def, const TokenCounter& count_tokens, int64_t max_seq_length,
                                  PythonRandom& rng);

}  // namespace foxeval::ruler
