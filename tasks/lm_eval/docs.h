// The 11 tasks' document functions, as lm-evaluation-harness 0.4.4 defines them in its task YAMLs
// and utils.py (doc_to_text, doc_to_choice, doc_to_target, process_docs), and the requests
// lm-eval's ConfigurableTask.construct_requests makes from them (zero-shot: the context is
// doc_to_text alone). Each function reads the Hugging Face dataset's own fields.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxeval::lm_eval {

// Where a document came from, for errors: "piqa: DIR/piqa.jsonl line 3: missing field 'goal'".
struct DocPlace {
  std::string task;
  std::string record;  // data/records.h record_where(): "FILE line N" or "FILE row N"
  std::string where() const;
};

// What lm-eval's doc_to_* functions give for one document.
struct DocParts {
  std::string text;                  // doc_to_text: the context (zero-shot)
  bool multiple_input = false;       // winogrande: doc_to_text is the gold index, choices are contexts
  std::vector<std::string> choices;  // doc_to_choice (multiple_choice tasks)
  int64_t gold = -1;                 // index into choices (multiple_choice tasks)
  std::string target;                // doc_to_target as text: continuation / rolling text / gold choice
  int64_t words = 0, bytes = 0;      // loglikelihood_rolling: counts of the original page
};

// One request as lm-eval numbers it: `index` is the choice (0 for single-request docs).
struct TaskRequest {
  std::string kind;  // "loglikelihood" or "loglikelihood_rolling"
  int64_t index = 0;
  std::string context, continuation;  // loglikelihood
  std::string text;                   // loglikelihood_rolling
};

using DocFunction = DocParts (*)(const nlohmann::json& doc, const DocPlace& place);

// The doc function of a task name (wikitext, lambada_openai, piqa, hellaswag, winogrande,
// arc_easy, arc_challenge, boolq, sciq, copa, openbookqa); nullptr for other names.
DocFunction doc_function(const std::string& task);

// construct_requests: `output_type` as the YAML's; `target_delimiter` " " for all 11 tasks.
std::vector<TaskRequest> build_requests(const std::string& output_type, const std::string& target_delimiter,
                                        const DocParts& parts);

// wikitext's preprocess_wikitext.wikitext_detokenizer (lm-eval 0.4.4), on the page's text.
std::string wikitext_detokenizer(const std::string& page);

}  // namespace foxeval::lm_eval
