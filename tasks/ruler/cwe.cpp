#include "tasks/ruler/cwe.h"

#include <algorithm>
#include <optional>
#include <set>

#include "data/errors.h"
#include "data/json_fields.h"
#include "data/json_file.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"
#include "tasks/ruler/sizing.h"

namespace foxeval::ruler {

namespace {

// " ".join(f"{i + 1}. {word}" for i, word in enumerate(words))
std::string numbered(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i ? " " : "") + std::to_string(i + 1) + ". " + words[i];
  return s;
}

struct Example {
  std::string context;
  std::vector<std::string> common;
};

// get_example(num_words, common_repeats, uncommon_repeats, common_nums).
Example get_example(const CweDefinition& def, CweState& st, int64_t num_words, int common_repeats, int uncommon_repeats,
                    PythonRandom& rng) {
  if (num_words < 0) throw Error("Sample larger than population or is negative");
  const std::vector<std::string> full = rng.sample(st.words, static_cast<size_t>(num_words));
  const size_t nc = std::min(full.size(), static_cast<size_t>(def.num_common));
  Example e;
  e.common.assign(full.begin(), full.begin() + static_cast<long>(nc));
  std::vector<std::string> list;
  for (int r = 0; r < common_repeats; ++r) list.insert(list.end(), e.common.begin(), e.common.end());
  for (int r = 0; r < uncommon_repeats; ++r) list.insert(list.end(), full.begin() + static_cast<long>(nc), full.end());
  st.module_rng.shuffle(list);
  e.context = numbered(list);
  return e;
}

struct CweInput {
  std::string example, input;
  std::vector<std::string> answer;
};

CweInput generate_input_output(const CweDefinition& def, CweState& st, int64_t num_words, int64_t max_len, PythonRandom& rng) {
  const CweRepeats& r = max_len < def.short_below ? def.short_lengths : def.long_lengths;
  Example ex = get_example(def, st, r.example_words, r.example_common, r.example_uncommon, rng);
  Example main = get_example(def, st, num_words, r.common, r.uncommon, rng);
  const std::string templ = def.template_text + def.answer_prefix;
  CweInput io;
  io.example = python_format(templ, {{"context", ex.context}}) + numbered(ex.common);
  io.input = python_format(templ, {{"context", main.context}});
  io.answer = main.common;
  return io;
}

}  // namespace

CweState::CweState(const CweDefinition& def, const std::vector<std::string>& nouns, const std::vector<std::string>& adjectives,
                   const std::vector<std::string>& verbs)
    : module_rng(def.module_seed) {
  std::set<std::string> all(nouns.begin(), nouns.end());  // byte order = Python's code point order
  all.insert(adjectives.begin(), adjectives.end());
  all.insert(verbs.begin(), verbs.end());
  words.assign(all.begin(), all.end());
  module_rng.shuffle(words);
}

std::vector<RulerDoc> cwe_samples(const CweDefinition& def, CweState& st, const TokenCounter& count, int64_t max_len,
                                  PythonRandom& rng) {
  const int64_t ttg = def.tokens_to_generate, incremental = def.incremental;
  const int64_t num_words = grow_to_fit(incremental, max_len - ttg, static_cast<int64_t>(st.words.size()), [&](int64_t n) {
    const CweInput io = generate_input_output(def, st, n, max_len, rng);
    return static_cast<int64_t>(count(io.example + "\n" + io.input + " " + numbered(io.answer)));
  });
  std::vector<RulerDoc> docs;
  for (int index = 0; index < def.num_samples; ++index) {
    int64_t used = num_words, length = 0;
    std::optional<CweInput> sample;
    // lm-eval retries forever; once the list cannot shrink and a try still fails it never ends.
    for (int stuck = 0; stuck < 1000;) {
      try {
        CweInput io = generate_input_output(def, st, used, max_len, rng);
        length = static_cast<int64_t>(count(io.input)) + ttg;
        if (length <= max_len) {
          sample = std::move(io);
          break;
        }
      } catch (const Error&) {
      }
      if (used > incremental) used -= incremental; else ++stuck;
    }
    if (!sample)
      throw Error("ruler_cwe: no sample fits " + std::to_string(max_len) + " tokens (lm-eval would retry forever); use longer lengths");
    // input_text[:input_text.rfind(answer_prefix)].strip()
    const size_t cut = sample->input.rfind(def.answer_prefix);
    const std::u32string in = utf8_to_u32(sample->input.substr(0, cut == std::string::npos ? sample->input.size() - 1 : cut), "cwe input");
    std::string prefix = def.answer_prefix;
    prefix.erase(0, prefix.find_first_not_of(' '));
    // gen_prefix: answer_prefix.strip() (it has no trailing whitespace)
    docs.push_back({index, u32_to_utf8(py_strip(in)), sample->answer, length, max_len, prefix, sample->example});
  }
  return docs;
}

CweDefinition load_cwe_definition(const std::string& path) {
  return read_json_section<CweDefinition>(path, "cwe", [](const nlohmann::json& c, CweDefinition& d) {
    read_fields(c, "template", d.template_text, "answer_prefix", d.answer_prefix, "module_seed", d.module_seed,
                "num_samples", d.num_samples, "tokens_to_generate", d.tokens_to_generate, "incremental", d.incremental,
                "num_common", d.num_common, "short_below", d.short_below);
    for (auto [key, r] : {std::pair{"short", &d.short_lengths}, std::pair{"long", &d.long_lengths}})
      read_fields(c.at(key), "example_words", r->example_words, "example_common_repeats", r->example_common,
                  "example_uncommon_repeats", r->example_uncommon, "common_repeats", r->common, "uncommon_repeats",
                  r->uncommon);
  });
}

}  // namespace foxeval::ruler
