// RULER's variable tracking (ruler_vt) generated as lm-eval 0.4.13's vt_utils.py does: chains of
// `VAR X = ...` assignments hidden in repeated noise, one in-context example per length (its
// variable names re-drawn by randomize_icl), draws from the shared CPython `random` stream and
// NumPy's legacy global generator (np.random.randint for each chain's value).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/python/numpy_random.h"
#include "data/python/python_random.h"
#include "tasks/ruler/niah.h"

namespace foxeval::ruler {

struct VtDefinition {
  std::string template_text, answer_prefix, noise;
  int num_samples = 500, tokens_to_generate = 30, incremental = 10, num_chains = 1, num_hops = 4;
  int var_length = 5, icl_var_length = 3, icl_max_hops = 10, icl_incremental = 5;
  int64_t icl_max_seq_length = 500, value_low = 10000, value_high = 99999;
};

// The "vt" part of ruler_tasks.json; foxeval::Error naming the file and field.
VtDefinition load_vt_definition(const std::string& ruler_tasks_json);

// get_dataset(tokenizer, seq=max_seq_length): the in-context example, then the samples.
// foxeval::Error where lm-eval raises or would loop forever (nothing fits the length).
std::vector<RulerDoc> vt_samples(const VtDefinition& def, const TokenCounter& count_tokens, int64_t max_seq_length,
                                 PythonRandom& rng, NumpyRandomState& np_rng);

}  // namespace foxeval::ruler
