#include "tasks/ruler/ruler_samples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/punkt.h"
#include "data/python/python_random.h"
#include "data/resources.h"
#include "data/tokenizer.h"
#include "tasks/ruler/ruler_data.h"
#include "tasks/ruler/cwe.h"
#include "tasks/ruler/fwe.h"
#include "tasks/ruler/qa.h"
#include "tasks/ruler/vt.h"

namespace foxeval::ruler {

namespace {

std::string ruler_tasks_json() { return ruler_tasks_path(); }

std::vector<std::string> group_order() {
  const nlohmann::json j = read_json(ruler_tasks_json());
  std::vector<std::string> out;
  for (const auto& t : j.at("group")) out.push_back(t.get<std::string>());
  return out;
}

}  // namespace

std::string ruler_tasks_path() {
  return find_resource({"the RULER task definitions", "tasks/ruler/ruler_tasks.json", {}, "FOXEVAL_RULER_DIR", "ruler_tasks.json"});
}

std::vector<std::string> available_tasks() {
  const NiahDefinition def = load_niah_definition(ruler_tasks_json());
  std::vector<std::string> out;
  for (const std::string& t : group_order())
    if (def.tasks.count(t) || t == "ruler_vt" || t == "ruler_cwe" || t == "ruler_fwe" || t == "ruler_qa_squad" || t == "ruler_qa_hotpot")
      out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, RulerDoc>> generate_samples(const SamplesSettings& s) {
  return generate_samples(s, Gpt2Tokenizer::load(s.model_dir));
}

std::vector<std::pair<std::string, RulerDoc>> generate_samples(const SamplesSettings& s, const Gpt2Tokenizer& tok) {
  const NiahDefinition def = load_niah_definition(ruler_tasks_json());
  const VtDefinition vt = load_vt_definition(ruler_tasks_json());
  const CweDefinition cwe = load_cwe_definition(ruler_tasks_json());
  const FweDefinition fwe = load_fwe_definition(ruler_tasks_json());
  const QaDefinition qa = load_qa_definition(ruler_tasks_json());
  const std::vector<std::string> available = available_tasks();
  const std::vector<std::string> tasks = s.tasks.empty() ? available : s.tasks;
  for (const std::string& t : tasks)
    if (std::find(available.begin(), available.end(), t) == available.end())
      throw Error(fmt::format("--tasks: '{}' is not a RULER task this build generates (it generates: {})", t, fmt::join(available, ", ")));
  const std::vector<int64_t> lengths = s.lengths.empty() ? std::vector<int64_t>{4096} : s.lengths;
  for (int64_t L : lengths)
    if (L < 1) throw Error(fmt::format("--lengths: {} is not a positive token count", L));

  // len(TOKENIZER(text).input_ids) for the checkpoints' JSONGPT2Tokenizer (add_bos_token=True).
  const TokenCounter count = [&tok](const std::string& text) { return tok.encode(text, true, true).size(); };

  bool needs_essays = false;
  for (const std::string& t : tasks) needs_essays |= def.tasks.count(t) && def.tasks.at(t).haystack == "essay";
  std::vector<std::string> essay_words;
  PunktParameters punkt;
  if (needs_essays) {
    // --haystack, else the Hugging Face caches, as lm-eval loads the essays.
    essay_words = essay_haystack_words(s.haystack_dir.empty() ? read_essays_from_hf_caches() : read_essay_folder(s.haystack_dir));
    punkt = load_punkt_params(s.punkt_dir.empty() ? find_punkt_tab("english") : std::filesystem::path(s.punkt_dir));
  }
  const std::string ww = find_wonderwords_dir(s.words_dir);
  const std::vector<std::string> adjectives = read_word_list(ww + "/adjectivelist.txt"), nouns = read_word_list(ww + "/nounlist.txt");
  const std::vector<std::string> words = niah_words(adjectives, nouns);
  // The QA files, read (and checked) before any generation; lm-eval caches each list and keeps
  // the order its generator leaves it in (qa.h).
  std::map<std::string, QaData> qa_data;
  for (const std::string& t : tasks) {
    if (t == "ruler_qa_squad") qa_data[t] = read_squad(find_qa_file(ruler_tasks_json(), t, s.squad_path));
    if (t == "ruler_qa_hotpot") qa_data[t] = read_hotpotqa(find_qa_file(ruler_tasks_json(), t, s.hotpot_path));
  }
  // cwe_utils' import (made by lm-eval whether or not the task runs: its Random(42) is its own).
  CweState cwe_state(cwe, nouns, adjectives, read_word_list(ww + "/verblist.txt"));

  NiahData data;
  data.essay_words = &essay_words;
  data.words = &words;
  data.punkt = &punkt;
  PythonRandom rng(0);           // simple_evaluate: random.seed(0)
  NumpyRandomState np_rng(1234);  // and np.random.seed(1234) (only ruler_vt draws from it)
  std::vector<std::pair<std::string, RulerDoc>> out;
  for (const std::string& t : tasks)
    for (int64_t L : lengths) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<RulerDoc> docs = t == "ruler_vt"    ? vt_samples(vt, count, L, rng, np_rng)
                                   : t == "ruler_cwe" ? cwe_samples(cwe, cwe_state, count, L, rng)
                                   : t == "ruler_fwe" ? fwe_samples(fwe, count, L, rng)
                                   : qa_data.count(t) ? qa_samples(qa, qa_data.at(t), count, L, rng)
                                                      : niah_samples(def, def.tasks.at(t), data, count, L, rng);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "ruler samples: %-16s %7lld tokens: %zu docs (%.2f s)\n", t.c_str(), static_cast<long long>(L), docs.size(), secs);
      for (RulerDoc& d : docs) out.emplace_back(t, std::move(d));
    }
  return out;
}

void write_samples(const SamplesSettings& s) {
  if (s.out_path.empty()) throw Error("--out: give the JSONL file to write");
  const std::vector<std::pair<std::string, RulerDoc>> docs = generate_samples(s);
  std::string text;
  std::map<std::string, int64_t> doc_ids;
  for (const auto& [task, d] : docs) {
    nlohmann::ordered_json doc;
    doc["index"] = d.index;
    doc["input"] = d.input;
    if (d.input_example) doc["input_example"] = *d.input_example;
    doc["outputs"] = d.outputs;
    doc["length"] = d.length;
    doc["max_length"] = d.max_length;
    doc["gen_prefix"] = d.gen_prefix;
    nlohmann::ordered_json line;
    line["task"] = task;
    line["doc_id"] = doc_ids[task]++;  // lm-eval's doc_id: the row in the task's dataset, lengths concatenated
    line["doc"] = std::move(doc);
    text += line.dump() + "\n";
  }
  write_text_atomic(s.out_path, text);
  std::printf("wrote %zu docs to %s\n", docs.size(), s.out_path.c_str());
}

}  // namespace foxeval::ruler
