// One function per task, each the rendering of its lm-eval 0.4.4 YAML templates / utils.py (the
// template strings are quoted above each function; tasks.json names the YAML files).
#include "tasks/lm_eval/docs.h"

#include <fmt/format.h>

#include <map>

#include "data/errors.h"
#include "tasks/lm_eval/pystr.h"

namespace foxeval::lm_eval {

std::string DocPlace::where() const { return fmt::format("{}: {}", task, record); }

namespace {

using nlohmann::json;

[[noreturn]] void fail(const DocPlace& p, const std::string& what) { throw Error(fmt::format("{}: {}", p.where(), what)); }

const json& field(const json& doc, const char* name, const DocPlace& p) {
  if (!doc.is_object()) fail(p, "the record is not an object");
  auto it = doc.find(name);
  if (it == doc.end()) fail(p, fmt::format("missing field '{}'", name));
  return *it;
}

std::string text(const json& doc, const char* name, const DocPlace& p) {
  const json& v = field(doc, name, p);
  if (!v.is_string()) fail(p, fmt::format("field '{}' must be a string, not {}", name, v.dump()));
  return v.get<std::string>();
}

int64_t integer(const json& doc, const char* name, const DocPlace& p) {
  const json& v = field(doc, name, p);
  if (!v.is_number_integer()) fail(p, fmt::format("field '{}' must be an integer, not {}", name, v.dump()));
  return v.get<int64_t>();
}

std::vector<std::string> strings(const json& v, const std::string& name, const DocPlace& p) {
  if (!v.is_array()) fail(p, fmt::format("field '{}' must be a list of strings, not {}", name, v.dump()));
  std::vector<std::string> out;
  for (const json& e : v) {
    if (!e.is_string()) fail(p, fmt::format("field '{}' must be a list of strings, not {}", name, v.dump()));
    out.push_back(e.get<std::string>());
  }
  return out;
}

// lm-eval drops a label outside the choices with a warning (the doc scores 0); foxeval refuses it:
// such a doc is a data error, not a wrong answer.
int64_t checked_gold(int64_t gold, const std::vector<std::string>& choices, const char* field_name, const DocPlace& p) {
  if (gold < 0 || gold >= static_cast<int64_t>(choices.size()))
    fail(p, fmt::format("field '{}': label {} is out of range for {} choices", field_name, gold, choices.size()));
  return gold;
}

// "{{choices.label.index(key)}}" over an ARC/OpenBookQA `choices: {text: [...], label: [...]}`.
DocParts lettered_choices(const json& doc, const std::string& text_str, const std::string& key, const DocPlace& p) {
  const json& choices = field(doc, "choices", p);
  if (!choices.is_object()) fail(p, "field 'choices' must be an object {text, label}");
  DocParts d;
  d.text = text_str;
  d.choices = strings(choices.contains("text") ? choices["text"] : json(), "choices.text", p);
  const std::vector<std::string> labels = strings(choices.contains("label") ? choices["label"] : json(), "choices.label", p);
  if (labels.size() != d.choices.size())
    fail(p, fmt::format("field 'choices': {} labels for {} texts", labels.size(), d.choices.size()));
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == key) {
      d.gold = static_cast<int64_t>(i);
      break;
    }
  if (d.gold < 0) fail(p, fmt::format("field 'answerKey': '{}' is not one of the choices' labels", key));
  d.target = d.choices[d.gold];
  return d;
}

// wikitext: doc_to_target = wikitext_detokenizer(doc); process_results counts words
// (len(re.split(r"\s+", page))) and UTF-8 bytes of the page *before* detokenizing.
DocParts wikitext(const json& doc, const DocPlace& p) {
  DocParts d;
  const std::string page = text(doc, "page", p);
  d.target = wikitext_detokenizer(page);
  d.words = py_split_whitespace_count(page);
  d.bytes = static_cast<int64_t>(page.size());
  return d;
}

// lambada_openai: "{{text.split(' ')[:-1]|join(' ')}}" and "{{' '+text.split(' ')[-1]}}".
DocParts lambada_openai(const json& doc, const DocPlace& p) {
  const std::string t = text(doc, "text", p);
  DocParts d;
  const size_t last = t.rfind(' ');
  d.text = last == std::string::npos ? std::string() : t.substr(0, last);
  d.target = " " + (last == std::string::npos ? t : t.substr(last + 1));
  return d;
}

// piqa: "Question: {{goal}}\nAnswer:", choices "{{[sol1, sol2]}}", target `label`.
DocParts piqa(const json& doc, const DocPlace& p) {
  DocParts d;
  d.text = "Question: " + text(doc, "goal", p) + "\nAnswer:";
  d.choices = {text(doc, "sol1", p), text(doc, "sol2", p)};
  d.gold = checked_gold(integer(doc, "label", p), d.choices, "label", p);
  d.target = d.choices[d.gold];
  return d;
}

// hellaswag utils.preprocess: strip, " [title]" -> ". ", drop "[...]" (re "\[.*?\]": no newline
// inside), then "  " -> " " once over the text.
std::string hellaswag_preprocess(const std::string& in) {
  std::string t = py_replace(py_strip(in), " [title]", ". ");
  std::string out;
  size_t i = 0;
  while (i < t.size()) {
    if (t[i] == '[') {
      const size_t close = t.find_first_of("]\n", i + 1);
      if (close != std::string::npos && t[close] == ']') {
        i = close + 1;
        continue;
      }
    }
    out += t[i++];
  }
  return py_replace(out, "  ", " ");
}

// hellaswag process_docs: query = preprocess(activity_label + ": " + ctx_a + " " +
// ctx_b.capitalize()), choices = preprocess(each ending), target "{{label}}" (a digit string).
DocParts hellaswag(const json& doc, const DocPlace& p) {
  DocParts d;
  d.text = hellaswag_preprocess(text(doc, "activity_label", p) + ": " + text(doc, "ctx_a", p) + " " +
                                py_capitalize(text(doc, "ctx_b", p)));
  const json& endings = field(doc, "endings", p);
  for (const std::string& e : strings(endings, "endings", p)) d.choices.push_back(hellaswag_preprocess(e));
  const json& label = field(doc, "label", p);
  if (label.is_number_integer()) {
    d.gold = label.get<int64_t>();
  } else if (label.is_string() && !label.get<std::string>().empty() &&
             label.get<std::string>().find_first_not_of("0123456789") == std::string::npos &&
             label.get<std::string>().size() < 10) {
    d.gold = std::stoll(label.get<std::string>());
  } else {
    fail(p, fmt::format("field 'label' must be a choice number (\"0\"..\"3\"), not {}", label.dump()));
  }
  d.gold = checked_gold(d.gold, d.choices, "label", p);
  d.target = d.choices[d.gold];
  return d;
}

// winogrande (preprocess_winogrande.py): partial evaluation. The choices are the sentence up to
// "_" with each option filled in; the target is what follows "_", stripped; doc_to_text is the
// gold index {"1": 0, "2": 1}[answer].
DocParts winogrande(const json& doc, const DocPlace& p) {
  const std::string sentence = text(doc, "sentence", p);
  const size_t blank = sentence.find('_');
  if (blank == std::string::npos) fail(p, "field 'sentence' has no '_' blank to fill");
  DocParts d;
  d.multiple_input = true;
  d.choices = {sentence.substr(0, blank) + text(doc, "option1", p), sentence.substr(0, blank) + text(doc, "option2", p)};
  d.target = py_strip(sentence.substr(blank + 1));
  const std::string answer = text(doc, "answer", p);
  if (answer != "1" && answer != "2") fail(p, fmt::format("field 'answer' must be \"1\" or \"2\", not \"{}\"", answer));
  d.gold = answer == "1" ? 0 : 1;
  return d;
}

// arc_easy / arc_challenge: "Question: {{question}}\nAnswer:", choices "{{choices.text}}",
// target "{{choices.label.index(answerKey)}}".
DocParts arc(const json& doc, const DocPlace& p) {
  return lettered_choices(doc, "Question: " + text(doc, "question", p) + "\nAnswer:", text(doc, "answerKey", p), p);
}

// boolq (super_glue): "{{passage}}\nQuestion: {{question}}?\nAnswer:", choices ["no", "yes"].
DocParts boolq(const json& doc, const DocPlace& p) {
  DocParts d;
  d.text = text(doc, "passage", p) + "\nQuestion: " + text(doc, "question", p) + "?\nAnswer:";
  d.choices = {"no", "yes"};
  d.gold = checked_gold(integer(doc, "label", p), d.choices, "label", p);
  d.target = d.choices[d.gold];
  return d;
}

// sciq: "{{support.lstrip()}}\nQuestion: {{question}}\nAnswer:", choices
// "{{[distractor1, distractor2, distractor3, correct_answer]}}", target 3.
DocParts sciq(const json& doc, const DocPlace& p) {
  DocParts d;
  d.text = py_lstrip(text(doc, "support", p)) + "\nQuestion: " + text(doc, "question", p) + "\nAnswer:";
  d.choices = {text(doc, "distractor1", p), text(doc, "distractor2", p), text(doc, "distractor3", p),
               text(doc, "correct_answer", p)};
  d.gold = 3;
  d.target = d.choices[3];
  return d;
}

// copa (super_glue/copa/utils.py): premise.strip() without its last character (the period) +
// " because"/" therefore"; choices " " + choice with its first letter lower-cased. With the
// target delimiter, continuations start with two spaces (as lm-eval's).
DocParts copa(const json& doc, const DocPlace& p) {
  static const std::map<std::string, std::string> connector = {{"cause", "because"}, {"effect", "therefore"}};
  const std::string question = text(doc, "question", p);
  auto c = connector.find(question);
  if (c == connector.end()) fail(p, fmt::format("field 'question' must be \"cause\" or \"effect\", not \"{}\"", question));
  DocParts d;
  d.text = py_drop_last(py_strip(text(doc, "premise", p))) + " " + c->second;
  for (const char* name : {"choice1", "choice2"}) {
    const std::string choice = text(doc, name, p);
    if (choice.empty()) fail(p, fmt::format("field '{}' is empty", name));
    d.choices.push_back(" " + py_lower_first(choice));
  }
  const int64_t label = checked_gold(integer(doc, "label", p), d.choices, "label", p);
  // doc_to_target is the gold choice's text and lm-eval scores against choices.index(target):
  // with two equal choices that is the first, whatever the label says.
  d.target = d.choices[label];
  d.gold = d.choices[0] == d.target ? 0 : 1;
  return d;
}

// openbookqa: doc_to_text `question_stem`, choices "{{choices.text}}",
// target "{{choices.label.index(answerKey.lstrip())}}".
DocParts openbookqa(const json& doc, const DocPlace& p) {
  return lettered_choices(doc, text(doc, "question_stem", p), py_lstrip(text(doc, "answerKey", p)), p);
}

}  // namespace

DocFunction doc_function(const std::string& task) {
  static const std::map<std::string, DocFunction> table = {
      {"wikitext", wikitext}, {"lambada_openai", lambada_openai}, {"piqa", piqa},   {"hellaswag", hellaswag},
      {"winogrande", winogrande}, {"arc_easy", arc},            {"arc_challenge", arc}, {"boolq", boolq},
      {"sciq", sciq},           {"copa", copa},                 {"openbookqa", openbookqa}};
  auto it = table.find(task);
  return it == table.end() ? nullptr : it->second;
}

std::vector<TaskRequest> build_requests(const std::string& output_type, const std::string& target_delimiter,
                                        const DocParts& parts) {
  std::vector<TaskRequest> out;
  if (output_type == "loglikelihood_rolling") {
    out.push_back({"loglikelihood_rolling", 0, "", "", parts.target});
  } else if (output_type == "loglikelihood") {
    out.push_back({"loglikelihood", 0, parts.text, parts.target, ""});
  } else if (output_type == "multiple_choice") {
    for (size_t i = 0; i < parts.choices.size(); ++i) {
      TaskRequest r{"loglikelihood", static_cast<int64_t>(i), "", "", ""};
      if (parts.multiple_input) {
        r.context = parts.choices[i];
        r.continuation = target_delimiter + parts.target;
      } else {
        r.context = parts.text;
        r.continuation = target_delimiter + parts.choices[i];
      }
      out.push_back(std::move(r));
    }
  } else {
    throw Error(fmt::format("internal: output_type '{}' is not one lm-eval task here uses", output_type));
  }
  return out;
}

}  // namespace foxeval::lm_eval
