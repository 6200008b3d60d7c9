// RULER's needle-in-a-haystack tasks (niah_single_1..3, niah_multikey_1..3, niah_multiquery,
// niah_multivalue) generated as lm-eval 0.4.13's prepare_niah.generate_samples does, draw for
// draw from the same CPython `random` stream, for any token counter and length. The definitions
// (templates, needle, per-task arguments) are data: tasks/ruler/ruler_tasks.json.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/python/punkt.h"
#include "data/python/python_random.h"

namespace foxeval::ruler {

// One generated doc, lm-eval's dataset row (what --log_samples writes as `doc`).
struct RulerDoc {
  int64_t index = 0;
  std::string input;
  std::vector<std::string> outputs;
  int64_t length = 0, max_length = 0;
  std::string gen_prefix;
  std::optional<std::string> input_example;  // ruler_cwe's docs only
};

struct NiahTask {
  std::string name, haystack, needle_k, needle_v;  // haystack: essay | repeat | needle
  int num_needle_k = 1, num_needle_v = 1, num_needle_q = 1;
};

struct NiahDefinition {
  std::string template_text, needle, repeat_haystack;
  std::vector<std::pair<std::string, std::string>> single_answer_rewrites;
  int num_samples = 500, tokens_to_generate = 128;
  uint64_t needle_shuffle_seed = 42;
  std::vector<int64_t> depths;
  std::map<std::string, NiahTask> tasks;
};

// The "niah" part of ruler_tasks.json; foxeval::Error naming the file and field.
NiahDefinition load_niah_definition(const std::string& ruler_tasks_json);

// What the generators read besides the random stream. `sentences` caches the Punkt split of the
// first n essay words (lm-eval's lru_cache on sent_tokenize: caching changes no value).
struct NiahData {
  const std::vector<std::string>* essay_words = nullptr;  // get_haystack("essay")
  const std::vector<std::string>* words = nullptr;        // prepare_niah.WORDS
  const PunktParameters* punkt = nullptr;
  std::map<size_t, std::vector<std::string>> sentences;
};

// len(TOKENIZER(text).input_ids) for the model's tokenizer.
using TokenCounter = std::function<size_t(const std::string&)>;

// generate_samples(...) of one task at one max_seq_length, drawing from `rng` (the global
// `random` lm-eval's generators share). foxeval::Error where lm-eval raises (no sample fits, a
// haystack that never reaches the length).
std::vector<RulerDoc> niah_samples(const NiahDefinition& def, const NiahTask& task, NiahData& data,
                                   const TokenCounter& count_tokens, int64_t max_seq_length, PythonRandom& rng);

// str.format for templates with named fields only ("{name}", "{{", "}}").
std::string python_format(const std::string& templ, const std::map<std::string, std::string>& fields);

}  // namespace foxeval::ruler
