#include "tasks/ruler/fwe.h"

#include <algorithm>
#include <set>

#include "data/errors.h"
#include "data/json_fields.h"
#include "data/json_file.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"

namespace foxeval::ruler {

namespace {

// scipy.special.zeta(2.0): 0x1.a51a6625307d3p+0, the double nearest pi**2 / 6.
constexpr double kZeta2 = 0x1.a51a6625307d3p+0;

const std::string kLower = "abcdefghijklmnopqrstuvwxyz";

// generate_input_output's vocabulary: vocab_size draws of random.choices(ascii_lowercase, k=6)
// (more while any repeats), sorted(set()), random.Random(SEED).shuffle, vocab[0] = "...".
std::vector<std::string> draw_vocab(const FweDefinition& def, size_t vocab_size, PythonRandom& rng) {
  std::set<std::string> unique;
  for (size_t i = 0; i < vocab_size; ++i) unique.insert(python_choices_string(rng, kLower, static_cast<size_t>(def.coded_wordlen)));
  while (unique.size() < vocab_size) unique.insert(python_choices_string(rng, kLower, static_cast<size_t>(def.coded_wordlen)));
  std::vector<std::string> vocab(unique.begin(), unique.end());  // ASCII: byte order = Python's
  PythonRandom(def.seed).shuffle(vocab);
  if (!vocab.empty()) vocab[0] = def.noise_word;  // "treat the top ranked as noise"
  return vocab;
}

struct Text {
  std::string text;
  size_t tokens = 0;
};

// gen_text(num_words): the template around " ".join(the shuffled words), counted once.
Text gen_text(const FweDefinition& def, const std::vector<std::string>& vocab, int64_t num_words, const TokenCounter& count) {
  const std::vector<int64_t> counts = fwe_counts(num_words, vocab.size(), def.alpha);
  std::vector<uint32_t> words;  // indices into vocab, in vocab order, then shuffled
  for (size_t k = 0; k < vocab.size(); ++k)
    for (int64_t c = 0; c < counts[k]; ++c) words.push_back(static_cast<uint32_t>(k));
  PythonRandom(def.seed).shuffle(words);
  std::string context;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) context += ' ';
    context += vocab[words[i]];
  }
  Text t;
  t.text = python_format(def.template_text + def.answer_prefix, {{"context", context}});
  t.tokens = count(t.text);
  return t;
}

struct Sized {
  Text text;
  std::vector<std::string> answer;  // vocab[1:4]
  int64_t num_words = 0;
};

// generate_input_output(max_len, num_words, ...): gen_text is a function of (vocab, num_words),
// so Python's closing `text, answer = gen_text(num_words)` equals the text last made for that
// count and is not made twice here.
Sized generate_input_output(const FweDefinition& def, const TokenCounter& count, int64_t max_len, int64_t num_words,
                            size_t vocab_size, int64_t incremental, PythonRandom& rng) {
  const std::vector<std::string> vocab = draw_vocab(def, vocab_size, rng);
  Sized s;
  if (num_words > 0) {
    s.text = gen_text(def, vocab, num_words, count);
    while (static_cast<int64_t>(s.text.tokens) > max_len) {
      // With no words left the text stops shrinking: lm-eval's loop would never end.
      if (num_words <= 0)
        throw Error("ruler_fwe: the template alone is " + std::to_string(s.text.tokens) + " tokens, over the length " +
                    std::to_string(max_len) + " (lm-eval would loop forever); use longer lengths");
      num_words -= incremental;
      s.text = gen_text(def, vocab, num_words, count);
    }
  } else {
    num_words = max_len / def.coded_wordlen;
    Text t = gen_text(def, vocab, num_words, count);
    while (static_cast<int64_t>(t.tokens) < max_len) {
      num_words += incremental;
      t = gen_text(def, vocab, num_words, count);
    }
    num_words -= incremental;
    s.text = gen_text(def, vocab, num_words, count);
  }
  s.num_words = num_words;
  s.answer.assign(vocab.begin() + 1, vocab.begin() + 1 + def.num_answers);
  return s;
}

}  // namespace

std::vector<int64_t> fwe_counts(int64_t num_words, size_t vocab_size, double alpha) {
  if (alpha != 2.0) throw Error("ruler_fwe: alpha " + std::to_string(alpha) + " is not 2 (the only exponent lm-eval uses and foxeval verified)");
  if (num_words > kFweVerifiedWords)
    throw Error("ruler_fwe: " + std::to_string(num_words) + " words is past the " + std::to_string(kFweVerifiedWords) +
                " for which foxeval's word counts are verified equal to NumPy's (tests/tools/ruler_fwe_power_check.py)");
  std::vector<int64_t> out(vocab_size);
  const double n = static_cast<double>(num_words);
  for (size_t i = 0; i < vocab_size; ++i) {
    const double k = static_cast<double>(i + 1);
    // k * k is exact (k < 2**26), so this is k**-2 correctly rounded; then NumPy's order of
    // operations: (num_words * p) / zeta, truncated toward zero by astype(int).
    const double p = 1.0 / (k * k);
    out[i] = static_cast<int64_t>(n * p / kZeta2);
  }
  return out;
}

std::vector<RulerDoc> fwe_samples(const FweDefinition& def, const TokenCounter& count, int64_t max_len, PythonRandom& rng) {
  const int64_t incremental = max_len / def.incremental_per_tokens;
  if (incremental < 1)
    throw Error("ruler_fwe: length " + std::to_string(max_len) + " is below " + std::to_string(def.incremental_per_tokens) +
                " tokens: lm-eval's sizing step (max_seq_length // " + std::to_string(def.incremental_per_tokens) + ") is 0 and it never ends");
  const size_t vocab_size = static_cast<size_t>(max_len / def.vocab_per_tokens);
  if (vocab_size < static_cast<size_t>(def.num_answers) + 1)
    throw Error("ruler_fwe: length " + std::to_string(max_len) + " gives a vocabulary of " + std::to_string(vocab_size) +
                " words, fewer than the noise word and " + std::to_string(def.num_answers) + " answers (lm-eval's vocab[1:4] would be short)");
  const int64_t num_example_words = generate_input_output(def, count, max_len, -1, vocab_size, incremental, rng).num_words;
  std::string prefix = def.answer_prefix;
  prefix.erase(0, prefix.find_first_not_of(' '));  // answer_prefix.strip() (no trailing whitespace)
  std::vector<RulerDoc> docs;
  for (int index = 0; index < def.num_samples; ++index) {
    Sized s = generate_input_output(def, count, max_len, num_example_words, vocab_size, incremental, rng);
    const std::string& text = s.text.text;
    // input_text[: input_text.rfind(answer_prefix)].strip() (rfind's -1 cuts the last character)
    const size_t cut = text.rfind(def.answer_prefix);
    const std::u32string in = utf8_to_u32(text.substr(0, cut == std::string::npos ? text.size() - 1 : cut), "fwe input");
    docs.push_back({index, u32_to_utf8(py_strip(in)), std::move(s.answer),
                    static_cast<int64_t>(s.text.tokens) + def.tokens_to_generate, max_len, prefix});
  }
  return docs;
}

FweDefinition load_fwe_definition(const std::string& path) {
  return read_json_section<FweDefinition>(path, "fwe", [](const nlohmann::json& f, FweDefinition& d) {
    read_fields(f, "template", d.template_text, "answer_prefix", d.answer_prefix, "noise_word", d.noise_word, "seed",
                d.seed, "num_samples", d.num_samples, "tokens_to_generate", d.tokens_to_generate, "coded_wordlen",
                d.coded_wordlen, "vocab_per_tokens", d.vocab_per_tokens, "incremental_per_tokens",
                d.incremental_per_tokens, "alpha", d.alpha, "num_answers", d.num_answers);
  });
}

}  // namespace foxeval::ruler
