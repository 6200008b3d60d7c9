// RULER's NIAH samples (tasks/ruler/niah.h) against lm-eval 0.4.13's generator run on the same
// synthetic essays, word lists and Punkt parameters with the checkpoints' tokenizer
// (tests/tools/ruler_goldens.py -> tests/fixtures/ruler/niah_goldens.jsonl): the eight NIAH tasks in
// the group's order at 1024 and 4096 tokens from one random stream seeded as simple_evaluate does.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "data/python/punkt.h"
#include "data/python/python_random.h"
#include "data/tokenizer.h"
#include "tasks/ruler/niah.h"
#include "tasks/ruler/ruler_data.h"
#include "tasks/ruler/ruler_samples.h"
#include "tasks/ruler/cwe.h"
#include "tasks/ruler/fwe.h"
#include "tasks/ruler/qa.h"
#include "tasks/ruler/vt.h"
#include "data/python/py_repr.h"
#include "data/content_digest.h"
#include "data/errors.h"

using nlohmann::json;
namespace ruler = foxeval::ruler;

namespace {

const std::string kSrc = std::string(FOXEVAL_SOURCE_DIR) + "/";
const std::string kFix = kSrc + "tests/fixtures/ruler/";

}  // namespace

namespace {

std::vector<json> read_goldens(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

void check_doc(const json& want, const std::string& task, const ruler::RulerDoc& d, size_t& full_inputs) {
  CAPTURE(task);
  CAPTURE(d.max_length);
  CAPTURE(d.index);
  REQUIRE(want["task"] == task);
  const json& w = want["doc"];
  REQUIRE(w["index"] == d.index);
  REQUIRE(w["outputs"] == json(d.outputs));
  REQUIRE(w["length"] == d.length);
  REQUIRE(w["max_length"] == d.max_length);
  REQUIRE(w["gen_prefix"] == d.gen_prefix);
  if (w.contains("input")) {
    REQUIRE(w["input"] == d.input);
    ++full_inputs;
  }
  REQUIRE(w["input_sha256"] == foxeval::sha256_hex(d.input));
  REQUIRE(w.contains("input_example_sha256") == d.input_example.has_value());
  if (d.input_example) {
    REQUIRE(w["input_example_sha256"] == foxeval::sha256_hex(*d.input_example));
    if (w.contains("input_example")) REQUIRE(w["input_example"] == *d.input_example);
  }
}

// The docs samples(length) makes at 1024, then 4096 tokens (advancing the RNG streams as lm-eval
// does), each against the next of `goldens` (from `next` on).
void check_lengths(const std::vector<json>& goldens, size_t& next, const std::string& task,
                   const std::function<std::vector<ruler::RulerDoc>(int64_t length)>& samples, size_t& full_inputs) {
  for (int64_t length : {1024, 4096})
    for (const ruler::RulerDoc& d : samples(length)) {
      REQUIRE(next < goldens.size());
      check_doc(goldens[next++], task, d, full_inputs);
    }
}

// One task whose docs come at 1024 and 4096 tokens alone: all of its goldens file's docs, in order,
// and how many of them hold the whole input.
void check_task(const std::string& goldens_file, const std::string& task,
                const std::function<std::vector<ruler::RulerDoc>(int64_t length)>& samples, size_t want_full_inputs) {
  const std::vector<json> goldens = read_goldens(goldens_file);
  size_t next = 0, full_inputs = 0;
  check_lengths(goldens, next, task, samples, full_inputs);
  CHECK(next == goldens.size());
  CHECK(next == 1000);
  CHECK(full_inputs == want_full_inputs);
}

}  // namespace

TEST_CASE("ruler samples: the 13 tasks of the group equal lm-eval 0.4.13's docs at 1024 and 4096 tokens") {
  const ruler::NiahDefinition def = ruler::load_niah_definition(kSrc + "tasks/ruler/ruler_tasks.json");
  const std::vector<std::string> essay_words = ruler::essay_haystack_words(ruler::read_essay_folder(kFix + "haystack"));
  const std::string ww = ruler::find_wonderwords_dir(kFix + "wonderwords");
  const std::vector<std::string> words =
      ruler::niah_words(ruler::read_word_list(ww + "/adjectivelist.txt"), ruler::read_word_list(ww + "/nounlist.txt"));
  const foxeval::PunktParameters punkt = foxeval::load_punkt_params(kFix + "nltk_data/tokenizers/punkt_tab/english");
  ruler::NiahData data;
  data.essay_words = &essay_words;
  data.words = &words;
  data.punkt = &punkt;
  const foxeval::Gpt2Tokenizer tok = foxeval::Gpt2Tokenizer::load("");
  const ruler::TokenCounter count = [&](const std::string& s) { return tok.encode(s, true, true).size(); };

  const std::vector<json> goldens = read_goldens(kFix + "niah_goldens.jsonl");
  REQUIRE(goldens.size() == 8000);

  foxeval::PythonRandom rng(0);  // simple_evaluate: random.seed(0)
  foxeval::NumpyRandomState np_rng(1234);  // and np.random.seed(1234)
  size_t g = 0, full_inputs = 0;
  for (const char* name : {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
                           "niah_multikey_3", "niah_multiquery", "niah_multivalue"}) {
    check_lengths(goldens, g, name, [&](int64_t length) {
      return ruler::niah_samples(def, def.tasks.at(name), data, count, length, rng);
    }, full_inputs);
  }
  CHECK(g == goldens.size());
  CHECK(full_inputs == 16);

  // ruler_vt, the group's next task: the same Python stream, and NumPy's from its seed.
  const ruler::VtDefinition vt = ruler::load_vt_definition(kSrc + "tasks/ruler/ruler_tasks.json");
  check_task(kFix + "vt_goldens.jsonl", "ruler_vt",
             [&](int64_t length) { return ruler::vt_samples(vt, count, length, rng, np_rng); }, 2);

  // ruler_cwe next: the same Python stream, and the module's own Random(42) made at import.
  const ruler::CweDefinition cwe = ruler::load_cwe_definition(kSrc + "tasks/ruler/ruler_tasks.json");
  ruler::CweState cwe_state(cwe, ruler::read_word_list(ww + "/nounlist.txt"), ruler::read_word_list(ww + "/adjectivelist.txt"),
                            ruler::read_word_list(ww + "/verblist.txt"));
  check_task(kFix + "cwe_goldens.jsonl", "ruler_cwe",
             [&](int64_t length) { return ruler::cwe_samples(cwe, cwe_state, count, length, rng); }, 2);

  // ruler_fwe next: the same Python stream (its vocabularies), a fresh Random(42) per shuffle.
  const ruler::FweDefinition fwe = ruler::load_fwe_definition(kSrc + "tasks/ruler/ruler_tasks.json");
  check_task(kFix + "fwe_goldens.jsonl", "ruler_fwe", [&](int64_t length) { return ruler::fwe_samples(fwe, count, length, rng); },
             2);

  // ruler_qa_squad, then ruler_qa_hotpot: the same stream; each keeps its document list's order
  // across lengths (lm-eval's cached list, shuffled in place when a sample takes all of it).
  const ruler::QaDefinition qa = ruler::load_qa_definition(kSrc + "tasks/ruler/ruler_tasks.json");
  const std::vector<json> qa_goldens = read_goldens(kFix + "qa_goldens.jsonl");
  size_t q = 0;
  full_inputs = 0;
  for (const char* name : {"ruler_qa_squad", "ruler_qa_hotpot"}) {
    ruler::QaData data = std::string(name) == "ruler_qa_squad" ? ruler::read_squad(kFix + "qa/dev-v2.0.json")
                                                              : ruler::read_hotpotqa(kFix + "qa/hotpot_dev_distractor_v1.json");
    check_lengths(qa_goldens, q, name, [&](int64_t length) { return ruler::qa_samples(qa, data, count, length, rng); },
                  full_inputs);
  }
  CHECK(q == qa_goldens.size());
  CHECK(q == 2000);
  CHECK(full_inputs == 4);
}

TEST_CASE("ruler: repr(str) and repr(list of str) equal CPython 3.11's over generated strings") {
  std::ifstream in(kFix + "repr_goldens.json");
  REQUIRE(in.good());
  const json cases = json::parse(in);
  REQUIRE(cases.size() > 1000);
  std::vector<std::string> all;
  for (const json& c : cases) {
    CAPTURE(c[1].get<std::string>());
    REQUIRE(foxeval::python_str_repr(c[0].get<std::string>()) == c[1].get<std::string>());
    all.push_back(c[0].get<std::string>());
  }
  CHECK(foxeval::python_str_list_repr({}) == "[]");
  CHECK(foxeval::python_str_list_repr({"a'", "b"}) == "[\"a'\", 'b']");
}

TEST_CASE("ruler_fwe: word counts are the truncated num_words * k**-2 / zeta(2); beyond the verified range, an error") {
  // NumPy: (100000 * np.arange(1, 6) ** -2.0 / zeta(2.0)).astype(int) -> [60792, 15198, 6754, 3799, 2431]
  CHECK(ruler::fwe_counts(100000, 5, 2.0) == std::vector<int64_t>{60792, 15198, 6754, 3799, 2431});
  CHECK(ruler::fwe_counts(-10, 3, 2.0) == std::vector<int64_t>{-6, -1, 0});
  CHECK_THROWS_WITH_AS(ruler::fwe_counts(ruler::kFweVerifiedWords + 1, 3, 2.0), doctest::Contains("verified"), foxeval::Error);
  CHECK_THROWS_AS(ruler::fwe_counts(10, 3, 1.5), foxeval::Error);
}

TEST_CASE("ruler samples: a task list at 16384 tokens equals lm-eval 0.4.13's (tests/fixtures/ruler/long_goldens.jsonl)") {
  const std::vector<json> goldens = read_goldens(kFix + "long_goldens.jsonl");
  ruler::SamplesSettings s;
  s.haystack_dir = kFix + "haystack";
  s.words_dir = kFix + "wonderwords";
  s.punkt_dir = kFix + "nltk_data/tokenizers/punkt_tab/english";
  s.squad_path = kFix + "qa";
  s.hotpot_path = kFix + "qa";
  for (const json& g : goldens) s.tasks.push_back(g["task"]);
  REQUIRE(s.tasks.size() == 7);
  s.lengths = {16384};
  const auto docs = ruler::generate_samples(s);
  size_t i = 0;
  for (const json& g : goldens) {
    for (const json& w : g["docs"]) {
      REQUIRE(i < docs.size());
      const auto& [task, d] = docs[i++];
      CAPTURE(task);
      CAPTURE(d.index);
      REQUIRE(task == g["task"]);
      REQUIRE(d.max_length == 16384);
      REQUIRE(w[0] == d.index);
      REQUIRE(w[1] == d.length);
      std::string outs;
      for (size_t k = 0; k < d.outputs.size(); ++k) outs += (k ? "\x1f" : "") + d.outputs[k];
      const std::string text = d.input + std::string(1, '\0') + outs + std::string(1, '\0') + d.gen_prefix + std::string(1, '\0') +
                               d.input_example.value_or("");
      REQUIRE(w[2] == foxeval::sha256_hex(text).substr(0, 16));
    }
  }
  CHECK(i == docs.size());
  CHECK(i == 3500);
}
