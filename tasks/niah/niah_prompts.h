// Needle-in-a-haystack prompts exactly as the official eval/niah/prompt.py builds them with the
// JSON-GPT2 tokenizer (tokenizer_type "Huggingface"), and the benchmark's definition data
// (tasks/niah/*.json: needle, questions, question suffix, buffer, default grid, with provenance).
//
// The official steps, and which calls add BOS / skip it (Gpt2Tokenizer = the JSONGPT2Tokenizer
// loaded with add_bos_token=True):
//   read_context_files: the haystack's *.txt files concatenated whole, again and again, while
//     the text counts fewer tokens than the largest length (counted WITH BOS).
//   encode_and_trim(L): tokens WITH BOS; if more than L, decode tokens[:L] skipping special
//     tokens (so BOS is dropped: L - 1 text tokens), json.loads-unescaped.
//   insert_needle(D, L): needle and context re-encoded WITHOUT BOS; L -= 200 (the buffer); when
//     context + needle exceed L the context keeps its first L - len(needle) tokens (a Python
//     slice: a negative end counts from the back); depth 100 appends the needle; otherwise the
//     insertion point int(len * (D / 100)) walks back until the token before it is "." (id 13),
//     or to 0; then decode (skipping special tokens, json.loads with the best-effort fallback).
//   generate_prompt: context + the question suffix; written as [system "", user] JSON.
// The one intended difference: files are taken in code-point order of their names (the
// official unsorted glob follows the filesystem's order).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace foxeval::niah {

// One mode of config-prompt-<mode>.yaml (+ the judge's question and reference of config-eval.yaml,
// + foxeval's offline answer).
struct Mode {
  std::string name;
  std::string needle, retrieval_question;     // the prompt
  std::string judge_question, judge_reference;  // what eval.py sends the judge
  std::string answer;                         // the words the offline scorer looks for
  std::vector<int64_t> lengths, depths;       // the mode's default grid
};

// prompt.py's constants (tasks/niah/prompt.json).
struct PromptDefinition {
  std::string question_suffix;  // "{question}" is replaced by the retrieval question
  int64_t buffer = 200;         // final_context_length_buffer
  std::string file_prefix;      // "Huggingface" (tokenizer_type): names of prompt/prediction files
};

// tasks/niah: $FOXEVAL_NIAH_DIR, else FOXEVAL_DATA_DIR/../tasks/niah (compile time), else
// <dir of the executable>/../tasks/niah; the first that holds prompt.json.
std::string definition_dir();
const std::vector<std::string>& known_modes();  // {"standard", "easy"}
Mode load_mode(const std::string& name);          // unknown name: Error listing the known ones
PromptDefinition load_prompt_definition();

// np.round(np.linspace(min, max, num)).astype(int) (round half to even, as numpy).
std::vector<int64_t> linspace_rounded(double min, double max, int64_t num);

// Errors (naming the flag and value) for lengths not above the buffer, depths outside 0..100,
// an empty grid or repeated values.
void validate_grid(const std::vector<int64_t>& lengths, const std::vector<int64_t>& depths, int64_t buffer);

// The haystack's files as Python's glob("DIR/*.txt") matches them (not hidden, ".txt" in lower
// case), in code-point order of their names. Error naming the folder when there is none.
std::vector<std::string> haystack_files(const std::string& dir);
// A file as Python's open(file, 'r').read() gives it: UTF-8 (an error names the file and byte
// offset when it is not) with universal newlines ("\r\n" and "\r" become "\n").
std::string read_haystack_file(const std::string& path);

// "Huggingface_len_{L}_depth_{int(D*100)}" (the official file stem of a cell).
std::string cell_stem(const std::string& prefix, int64_t length, int64_t depth);
// The file prompt.py writes: json.dump([{"role": "system", "content": ""},
// {"role": "user", "content": user}]) with Python's separators and ASCII escaping; takes the
// user message already escaped (PromptBuilder::escaped_user_message).
std::string prompt_file_text(const std::string& escaped_user_message);

class PromptBuilder {
 public:
  // Reads the haystack (repeated until it counts at least max(lengths) tokens with BOS).
  PromptBuilder(const Gpt2Tokenizer& tok, const std::string& haystack_dir, const std::vector<int64_t>& lengths,
                std::string needle, std::string retrieval_question, PromptDefinition def);
  // The context of one cell (generate_context) and the user message (context + question suffix),
  // as json.dumps(...)[1:-1] of the official str (python_reescape in data/python/json_escape.h says why), and the prompt's ids
  // as pred.py tokenizes the user message (with BOS).
  std::string escaped_context(int64_t length, int64_t depth);
  std::string escaped_user_message(int64_t length, int64_t depth);
  std::vector<int64_t> prompt_ids(int64_t length, int64_t depth);

 private:
  const Gpt2Tokenizer& tok_;
  std::string haystack_, needle_, question_;
  PromptDefinition def_;
  std::vector<int64_t> haystack_tokens_;  // the haystack encoded with BOS
  std::vector<int64_t> needle_tokens_, period_;
  std::map<int64_t, std::vector<int64_t>> trimmed_;  // length -> encode(encode_and_trim(L)) without BOS
};

}  // namespace foxeval::niah
