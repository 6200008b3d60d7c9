// BABILong as lm-evaluation-harness 0.4.13's `babilong` tasks (lm_eval/tasks/babilong/), from the
// definitions in tasks/babilong/babilong_tasks.json (written from lm-eval's YAML files by
// tests/tools/make_babilong_tasks.py): per task qa1..qa20 its description and two few-shot examples
// (sampler first_n), and what every task shares (doc_to_text, the delimiters, max_gen_toks 16).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace foxeval::babilong {

struct Doc {
  std::string input, question, target;
};

struct TaskDef {
  std::string name;         // "qa1"
  std::string lm_eval_task;  // "babilong_qa1"
  std::string description;
  std::vector<Doc> fewshot;               // the first num_fewshot samples of the YAML
  // The lengths the dataset holds it at (lm-eval's README: qa1-qa5 0k..128k, qa6-qa20 0k only;
  // qa11-qa20's YAMLs name the 0k config, qa6-qa10 would fail to load at another length).
  std::vector<std::string> lengths;
};

struct Definitions {
  std::string dataset_path;                 // RMT-team/babilong-1k-samples
  std::vector<std::string> lengths;         // 0k .. 128k, in order
  std::vector<std::string> default_tasks;   // qa1..qa5
  std::string target_delimiter, fewshot_delimiter;
  int64_t max_gen_toks = 16;
  std::map<std::string, TaskDef> tasks;
  std::vector<std::string> task_order;      // qa1..qa20
  std::string path;                         // the file read, for messages
};

// Reads tasks/babilong/babilong_tasks.json (or $FOXEVAL_BABILONG_DIR/babilong_tasks.json); checks
// that its shared templates are the ones this code implements.
const Definitions& definitions();

// lm-eval's doc_to_text, "{{input.strip()}}\n{{question.strip()}}" (Python's str.strip).
std::string doc_to_text(const Doc& d);

// The generate_until context lm-eval builds: description + each few-shot example's text, target
// delimiter and target, joined and followed by the few-shot delimiter + the document's text.
std::string context(const TaskDef& task, const Doc& d);

// common_utils.process_results: the prediction stripped, every character in [\x00-\x1f] made a
// newline, stripped again; 1 when the stripped target, lower-cased, is in it lower-cased (Python's
// str.lower over all of Unicode), else 0. Invalid UTF-8 is an Error naming `what`.
double score(const std::string& target, const std::string& prediction, const std::string& what = "prediction");

}  // namespace foxeval::babilong
