// Shapes read from lm-eval 0.4.4 (git tag v0.4.4): evaluator.py (the sample dict; results'
// "config"), loggers/evaluation_tracker.py (file names, "arguments" as gen_args_i/arg_j,
// sanitize_list on resps, str(target), task_hashes, GeneralConfigTracker fields), utils.py
// (sanitize_model_name, hash_string, get_file_datetime), api/task.py (doc_to_target),
// tasks/hellaswag/utils.py (process_docs adds query, choices, gold to the doc).
#include "tasks/lm_eval/lm_eval_output.h"

#include <fmt/format.h>
#include <sys/time.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/numbers.h"
#include "data/content_digest.h"
#include "data/python/json_dumps.h"

namespace foxeval::lm_eval {
namespace fs = std::filesystem;
using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::string sanitize_model_name(const std::string& name) {
  static const std::string bad = "\"<>:/|\\?*[]";
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (bad.find(name[i]) != std::string::npos) {
      while (i < name.size() && bad.find(name[i]) != std::string::npos) ++i;
      out += "__";
    } else {
      out += name[i++];
    }
  }
  return out;
}

std::string model_name_from_args(const std::string& model_args) {
  for (const char* prefix : {"peft=", "delta=", "pretrained=", "model=", "path=", "engine="}) {
    const size_t at = model_args.find(prefix);
    if (at == std::string::npos) continue;
    const std::string after = model_args.substr(at + std::string(prefix).size());
    // str.split(key)[1]: up to the next occurrence of the key, then up to the next ','.
    const std::string part = after.substr(0, after.find(prefix));
    return part.substr(0, part.find(','));
  }
  return "";
}

std::string model_output_dir(const std::string& output_path, const std::string& model_args) {
  const std::string model = model_name_from_args(model_args), sanitized = sanitize_model_name(model);
  if (sanitized == "." || sanitized == "..")
    throw Error(fmt::format("--output_path: the model name '{}' makes no folder inside {} (lm-eval names the folder "
                            "after it); give the model as a path that ends in its folder's name",
                            model, output_path));
  return (fs::path(output_path) / sanitized).string();
}

std::string date_id_now() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  std::tm tm{};
  localtime_r(&tv.tv_sec, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H-%M-%S", &tm);
  std::string out = buf;
  if (tv.tv_usec != 0) out += fmt::format(".{:06d}", static_cast<int>(tv.tv_usec));
  return out;
}

namespace {

// Python's str() of a float and of a bool, as sanitize_list writes every response value.
std::string py_str(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return python_float_repr(x);
}
std::string py_str(bool b) { return b ? "True" : "False"; }

// doc_to_target as lm-eval's ConfigurableTask returns it, then str(): the gold index for tasks
// whose target is an index (a field, a constant, or a template rendering digits), the text for
// the others (wikitext, lambada, winogrande, copa).
std::string target_text(const TaskDocs& t, size_t d) {
  static const std::map<std::string, bool> index_target = {
      {"piqa", true},  {"hellaswag", true}, {"arc_easy", true}, {"arc_challenge", true}, {"boolq", true},
      {"sciq", true},  {"openbookqa", true}, {"wikitext", false}, {"lambada_openai", false},
      {"winogrande", false}, {"copa", false}};
  const DocParts& p = t.docs[d];
  return index_target.at(t.config.name) ? std::to_string(p.gold) : p.target;
}

// The doc lm-eval's evaluator holds: hellaswag's process_docs (dataset.map) appends query,
// choices and gold to the row; the other tasks use the row as loaded.
ordered_json evaluated_doc(const TaskDocs& t, size_t d) {
  ordered_json doc = t.raw[d];
  if (t.config.name == "hellaswag") {
    doc["query"] = t.docs[d].text;
    doc["choices"] = t.docs[d].choices;
    doc["gold"] = t.docs[d].gold;
  }
  return doc;
}


}  // namespace

ordered_json sample_line(const TaskDocs& t, size_t d, const DocScoring& s, const std::vector<Answer>& answers) {
  const std::vector<TaskRequest> requests = build_requests(t.config.output_type, t.config.target_delimiter, t.docs[d]);
  const bool rolling = t.config.output_type == "loglikelihood_rolling";
  ordered_json arguments = ordered_json::object(), resps = ordered_json::array(), filtered = ordered_json::array();
  for (size_t i = 0; i < requests.size(); ++i) {
    ordered_json args = ordered_json::object();
    if (rolling) {
      args["arg_0"] = requests[i].text;
    } else {
      args["arg_0"] = requests[i].context;
      args["arg_1"] = requests[i].continuation;
    }
    arguments[fmt::format("gen_args_{}", i)] = std::move(args);
  }
  if (rolling) {
    double ll = 0;  // HFLM sums the windows in order
    for (const Answer& a : answers) ll += a.logprob;
    resps.push_back(ordered_json::array({py_str(ll)}));
    filtered.push_back(py_str(ll));
  } else {
    if (answers.size() != requests.size())
      throw Error(fmt::format("{} doc {}: {} answers for {} requests", t.config.name, d, answers.size(), requests.size()));
    for (const Answer& a : answers) {
      const ordered_json pair = ordered_json::array({py_str(a.logprob), py_str(a.is_greedy)});
      resps.push_back(ordered_json::array({pair}));
      filtered.push_back(pair);
    }
  }
  const ordered_json doc = evaluated_doc(t, d);
  const std::string target = target_text(t, d);
  ordered_json line = ordered_json::object();
  line["doc_id"] = d;
  line["doc"] = doc;
  line["target"] = target;
  line["arguments"] = std::move(arguments);
  line["resps"] = std::move(resps);
  line["filtered_resps"] = std::move(filtered);
  line["doc_hash"] = sha256_hex(python_json_dumps(doc, 2));
  line["prompt_hash"] = sha256_hex(rolling ? requests.at(0).text : requests.at(0).context);
  line["target_hash"] = sha256_hex(target);
  const json metrics = process_results(t.config, s, answers);
  for (const MetricSpec& m : t.config.metrics)  // process_results' key order
    if (metrics.contains(m.metric)) line[m.metric] = to_ordered_json(metrics.at(m.metric));
  return line;
}

std::string write_output_tree(const OutputTree& tree, const json& result, const std::vector<TaskDocs>& tasks,
                              const std::vector<json>& records) {
  const std::string model_name = model_name_from_args(tree.model_args);
  const std::string sanitized = sanitize_model_name(model_name);
  const fs::path dir = model_output_dir(tree.output_path, tree.model_args);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("--output_path: cannot create {} ({})", dir.string(), ec.message()));
  const std::string date_id = date_id_now();

  std::map<std::string, const TaskDocs*> by_name;
  for (const TaskDocs& t : tasks) by_name[t.config.name] = &t;
  ordered_json task_hashes = ordered_json::object();
  if (tree.log_samples) {
    std::map<std::string, std::string> text, hashes;
    for (const json& r : records) {
      const std::string name = r.at("task").get<std::string>();
      DocScoring s;
      std::vector<Answer> answers;
      record_answers(r, &s, &answers);
      const ordered_json line = sample_line(*by_name.at(name), r.at("doc_id").get<size_t>(), s, answers);
      text[name] += python_json_dumps(line) + "\n";
      hashes[name] += line["doc_hash"].get<std::string>() + line["prompt_hash"].get<std::string>() +
                      line["target_hash"].get<std::string>();
    }
    for (const TaskDocs& t : tasks) {
      const std::string& name = t.config.name;
      write_text_atomic((dir / fmt::format("samples_{}_{}.jsonl", name, date_id)).string(), text[name]);
      task_hashes[name] = sha256_hex(hashes[name]);
    }
  }

  ordered_json out = ordered_json::object();
  for (const char* key : {"results", "groups", "group_subtasks"})
    if (result.contains(key)) out[key] = to_ordered_json(result.at(key));
  ordered_json configs = ordered_json::object();
  for (const TaskDocs& t : tasks) {
    const TaskConfig& c = t.config;
    ordered_json m = ordered_json::array();
    for (const MetricSpec& spec : c.metrics)
      m.push_back({{"metric", spec.metric}, {"aggregation", spec.aggregation}, {"higher_is_better", spec.higher_is_better}});
    ordered_json cfg = {{"task", c.name}, {"dataset_path", c.dataset_path},
                        {"dataset_name", c.dataset_name.empty() ? ordered_json(nullptr) : ordered_json(c.dataset_name)}};
    cfg[c.split == "test" ? "test_split" : "validation_split"] = c.split;
    cfg["target_delimiter"] = c.target_delimiter;
    cfg["fewshot_delimiter"] = "\n\n";
    cfg["num_fewshot"] = 0;
    cfg["metric_list"] = std::move(m);
    cfg["output_type"] = c.output_type;
    cfg["repeats"] = 1;
    cfg["should_decontaminate"] = false;
    cfg["metadata"] = {{"version", c.version}};
    configs[c.name] = std::move(cfg);
  }
  out["configs"] = std::move(configs);
  for (const char* key : {"versions", "n-shot", "higher_is_better", "n-samples"}) out[key] = to_ordered_json(result.at(key));
  ordered_json limit = nullptr;
  if (tree.limit_fraction > 0) limit = tree.limit_fraction;
  else if (tree.limit_count > 0) limit = static_cast<double>(tree.limit_count);  // argparse type=float
  out["config"] = {{"model", "foxeval"},
                   {"model_args", tree.model_args},
                   {"batch_size", to_ordered_json(tree.batch_size)},
                   {"batch_sizes", ordered_json::array()},
                   {"device", tree.device},
                   {"use_cache", nullptr},
                   {"limit", limit},
                   {"bootstrap_iters", 0},
                   {"gen_kwargs", nullptr}};
  out["date"] = tree.start_time;
  out["task_hashes"] = std::move(task_hashes);
  out["model_source"] = "foxeval";
  out["model_name"] = model_name;
  out["model_name_sanitized"] = sanitized;
  timeval now{};
  gettimeofday(&now, nullptr);
  const double end = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_usec) * 1e-6;
  out["start_time"] = tree.start_time;
  out["end_time"] = end;
  out["total_evaluation_time_seconds"] = python_float_repr(end - tree.start_time);
  // foxeval's own: what lm-eval has no key for (stderr notes, the data sources, the run header).
  for (const char* key : {"task_definitions", "stderr_note", "perplexity_stderr_delta_method", "model", "header"})
    if (result.contains(key)) out[key] = to_ordered_json(result.at(key));
  const std::string path = (dir / fmt::format("results_{}.json", date_id)).string();
  write_text_atomic(path, python_json_dumps(out, 2));
  return path;
}

}  // namespace foxeval::lm_eval
