// RULER's question answering (ruler_qa_squad, ruler_qa_hotpot) generated as lm-eval 0.4.13's
// qa_utils.py does: a question's gold documents plus distractors drawn from the shared CPython
// `random` stream, shuffled by a fresh random.Random(42), numbered into the template. The data
// are the files lm-eval downloads (SQuAD v2 dev, HotpotQA dev-distractor), read where researchers
// keep them (never downloaded).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/python/python_random.h"
#include "tasks/ruler/niah.h"

namespace foxeval::ruler {

struct QaDefinition {
  std::string template_text, document_prompt, gen_prefix;
  uint64_t seed = 42;
  int num_samples = 500, tokens_to_generate = 32, incremental = 10;
};

// The "qa" part of ruler_tasks.json; foxeval::Error naming the file and field.
QaDefinition load_qa_definition(const std::string& ruler_tasks_json);

struct QaQuestion {
  std::string query;
  std::vector<std::string> outputs;
  std::vector<size_t> context, more_context;  // indices into QaData::docs
};

// read_squad() / read_hotpotqa()'s (total_qas, total_docs). `docs` is the list lm-eval caches and
// hands to every call: generate_input_output shuffles it in place whenever a sample takes all of
// it, so the order carries over to later samples and lengths of the same task.
struct QaData {
  std::vector<QaQuestion> qas;
  std::vector<std::string> docs;
  std::string path;  // for messages
};

// read_squad(): dev-v2.0.json's articles; the answerable questions, each with its paragraph and
// the other paragraphs of its article. foxeval::Error naming the file and field.
QaData read_squad(const std::string& path);
// read_hotpotqa(): hotpot_dev_distractor_v1.json; every question with its context documents
// ("{title}\n{''.join(sentences)}").
QaData read_hotpotqa(const std::string& path);

// The file to read for `task` (ruler_qa_squad / ruler_qa_hotpot): `flag_path` (the file, or a
// folder holding it) when given, else $FOXEVAL_RULER_DATA/<file>, else
// ~/.cache/foxeval/ruler/<file>. foxeval::Error naming where it looked and the command that
// fetches it.
std::string find_qa_file(const std::string& ruler_tasks_json, const std::string& task, const std::string& flag_path);

// get_dataset(tokenizer, docs, qas, max_seq_length). foxeval::Error where lm-eval raises (fewer
// questions than samples, no sample fits).
std::vector<RulerDoc> qa_samples(const QaDefinition& def, QaData& data, const TokenCounter& count_tokens,
                                 int64_t max_seq_length, PythonRandom& rng);

}  // namespace foxeval::ruler
