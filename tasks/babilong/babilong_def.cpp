#include "tasks/babilong/babilong_def.h"

#include <fmt/format.h>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"
#include "data/resources.h"

namespace foxeval::babilong {
namespace {

std::string strip_utf8(const std::string& s, const std::string& what) { return u32_to_utf8(py_strip(utf8_to_u32(s, what))); }

Definitions load() {
  Definitions d;
  d.path = find_resource({"the BABILong task definitions", "tasks/babilong/babilong_tasks.json", {}, "FOXEVAL_BABILONG_DIR",
                          "babilong_tasks.json"});
  const nlohmann::json j = read_json(d.path);
  try {
    const nlohmann::json& c = j.at("common");
    // The templates this code implements: a file with others is another task, not this one.
    if (c.at("doc_to_text") != "{{input.strip()}}\n{{question.strip()}}" || c.at("doc_to_target") != "{{target}}" ||
        c.at("sampler") != "first_n" || !c.at("generation_kwargs").at("until").empty() ||
        c.at("generation_kwargs").at("do_sample") != false)
      throw Error(fmt::format("{}: common templates differ from lm-eval 0.4.13's babilong (doc_to_text, doc_to_target, "
                              "sampler, until, do_sample)", d.path));
    d.dataset_path = j.at("dataset_path").get<std::string>();
    d.lengths = j.at("lengths").get<std::vector<std::string>>();
    d.default_tasks = j.at("default_tasks").get<std::vector<std::string>>();
    d.target_delimiter = c.at("target_delimiter").get<std::string>();
    d.fewshot_delimiter = c.at("fewshot_delimiter").get<std::string>();
    d.max_gen_toks = c.at("generation_kwargs").at("max_gen_toks").get<int64_t>();
    const int64_t shots = c.at("num_fewshot").get<int64_t>();
    for (auto it = j.at("tasks").begin(); it != j.at("tasks").end(); ++it) {
      TaskDef t;
      t.name = it.key();
      t.lm_eval_task = it->at("task").get<std::string>();
      t.description = it->at("description").get<std::string>();
      for (const nlohmann::json& s : it->at("fewshot"))
        t.fewshot.push_back({s.at("input").get<std::string>(), s.at("question").get<std::string>(), s.at("target").get<std::string>()});
      if (static_cast<int64_t>(t.fewshot.size()) != shots)
        throw Error(fmt::format("{}: task {} has {} few-shot examples, num_fewshot is {}", d.path, t.name, t.fewshot.size(), shots));
      t.lengths = it->at("lengths").get<std::vector<std::string>>();
      d.tasks[t.name] = t;
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", d.path, e.what()));
  }
  for (int i = 1; i <= 20; ++i)
    if (d.tasks.count(fmt::format("qa{}", i))) d.task_order.push_back(fmt::format("qa{}", i));
  return d;
}

}  // namespace

const Definitions& definitions() {
  static const Definitions d = load();
  return d;
}

std::string doc_to_text(const Doc& d) {
  return strip_utf8(d.input, "input") + "\n" + strip_utf8(d.question, "question");
}

std::string context(const TaskDef& task, const Doc& d) {
  const Definitions& defs = definitions();
  std::string shots;
  for (size_t i = 0; i < task.fewshot.size(); ++i) {
    if (i > 0) shots += defs.fewshot_delimiter;
    shots += doc_to_text(task.fewshot[i]) + defs.target_delimiter + task.fewshot[i].target;
  }
  if (!task.fewshot.empty()) shots += defs.fewshot_delimiter;
  return task.description + shots + doc_to_text(d);
}

double score(const std::string& target, const std::string& prediction, const std::string& what) {
  std::u32string pred = py_strip(utf8_to_u32(prediction, what));
  for (char32_t& c : pred)
    if (c <= 0x1f) c = U'\n';
  pred = py_lower(py_strip(pred));
  const std::u32string t = py_lower(py_strip(utf8_to_u32(target, what + " target")));
  return pred.find(t) != std::u32string::npos ? 1.0 : 0.0;
}

}  // namespace foxeval::babilong
