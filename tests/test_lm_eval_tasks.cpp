// The 11 lm-eval tasks against lm-evaluation-harness 0.4.4 itself: request strings and metrics
// on our own documents (tests/fixtures/lm_eval/, made by tests/tools/lm_eval_tasks_golden.py from
// lm-eval's own task objects, process_results and aggregations), plus the bad-input errors.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/lm_eval/metrics.h"
#include "tasks/lm_eval/pystr.h"
#include "tests/temp_files.h"

using nlohmann::json;
using namespace foxeval;
using namespace foxeval::lm_eval;

namespace {

std::string fixtures(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/lm_eval/" + rel; }

const json& golden() {
  static const json g = read_json(fixtures("tasks_golden.json"));
  return g;
}

std::vector<Answer> answers_of(const json& a) {
  std::vector<Answer> out;
  for (const json& x : a) out.push_back({x.at("logprob").get<double>(), x.at("is_greedy").get<bool>()});
  return out;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("lm_eval task requests equal lm-eval 0.4.4's for every task") {
  const json& g = golden().at("tasks");
  CHECK(g.size() == 11);
  for (auto& [name, t] : g.items()) {
    CAPTURE(name);
    const TaskDocs docs = load_task_docs(task_config(name), fixtures("data"), -1);
    CHECK(docs.total == t.at("docs").get<int64_t>());
    const std::vector<json> lines = request_lines(docs);
    REQUIRE(lines.size() == t.at("requests").size());
    for (size_t i = 0; i < lines.size(); ++i) {
      CAPTURE(i);
      CHECK(lines[i] == t.at("requests")[i]);
    }
    CHECK(task_config(name).yaml == t.at("yaml").get<std::string>());
    CHECK(task_config(name).version == t.at("version").get<double>());
  }
}

TEST_CASE("lm_eval task --limit takes the first documents") {
  const TaskDocs docs = load_task_docs(task_config("piqa"), fixtures("data"), 2);
  CHECK(docs.total == 4);
  CHECK(docs.docs.size() == 2);
  CHECK(request_lines(docs).size() == 4);
  CHECK(load_task_docs(task_config("piqa"), fixtures("data"), 100).docs.size() == 4);
}

TEST_CASE("lm_eval task metrics equal lm-eval's process_results and aggregations") {
  for (auto& [name, t] : golden().at("tasks").items()) {
    CAPTURE(name);
    const TaskConfig& c = task_config(name);
    const TaskDocs docs = load_task_docs(c, fixtures("data"), -1);
    std::vector<json> dm;
    for (size_t d = 0; d < docs.docs.size(); ++d) {
      CAPTURE(d);
      dm.push_back(process_results(c, scoring_of(docs.docs[d]), answers_of(t.at("answers")[d])));
      CHECK(dm.back() == t.at("doc_metrics")[d]);  // exact: same values, same operations
    }
    json expected = t.at("results");
    // lm-eval bootstraps lambada's perplexity stderr (seeded; the golden marks the slot
    // "bootstrap"): foxeval's bootstrap is tested against lm-eval's own in test_item_stats.cpp.
    for (auto& [k, v] : expected.items())
      if (v == "bootstrap") {
        std::vector<double> lls;
        for (const json& d : dm) lls.push_back(d.at("perplexity").get<double>());
        v = lm_eval_bootstrap_stderr("perplexity", lls, {});
      }
    CHECK(task_results(c, dm) == expected);
    for (const MetricSpec& m : c.metrics) CHECK(m.higher_is_better == t.at("higher_is_better").at(m.metric).get<bool>());
  }
}

TEST_CASE("lm_eval task acc_norm divides by characters, as lm-eval's len(choice)") {
  // piqa doc 2: "ééééé" (5 characters, 10 bytes) vs "abcdefg": per character the second wins.
  TaskConfig c = task_config("piqa");
  DocScoring s{0, {py_len("ééééé"), py_len("abcdefg")}, 0, 0};
  CHECK(s.choice_len == std::vector<int64_t>{5, 7});
  const json m = process_results(c, s, {{-10.0, false}, {-13.0, true}});
  CHECK(m.at("acc") == 1.0);
  CHECK(m.at("acc_norm") == 0.0);
  // Ties go to the first choice (np.argmax).
  CHECK(process_results(c, DocScoring{1, {4, 4}, 0, 0}, {{-4.0, true}, {-4.0, true}}).at("acc") == 0.0);
}

TEST_CASE("lm_eval task result builder gives lm-eval's results dict from records") {
  const json& g = golden().at("tasks");
  json identity = {{"model", "m"}, {"tasks", json::array()}, {"data", json::object()}};
  std::vector<json> records;
  for (auto& [name, t] : g.items()) {
    const TaskDocs docs = load_task_docs(task_config(name), fixtures("data"), 3);
    identity["tasks"].push_back(name);
    identity["data"][name] = {{"docs_total", docs.total}, {"docs_evaluated", docs.docs.size()}};
    for (size_t d = 0; d < docs.docs.size(); ++d) {
      const DocScoring s = scoring_of(docs.docs[d]);
      json r = {{"task", name}, {"doc_id", d}, {"answers", t.at("answers")[d]}};
      if (s.gold >= 0) r["gold"] = s.gold, r["choice_len"] = s.choice_len;
      if (s.words > 0) r["words"] = s.words, r["bytes"] = s.bytes;
      records.push_back(r);
    }
  }
  const json out = build_lm_eval_result(identity, records);
  CHECK(out.at("results").size() == 11);
  CHECK(out.at("results").at("piqa").at("alias") == "piqa");
  CHECK(out.at("n-samples").at("piqa") == json{{"original", 4}, {"effective", 3}});
  CHECK(out.at("n-samples").at("boolq") == json{{"original", 3}, {"effective", 3}});
  // boolq has all its 3 docs: its numbers are the golden's.
  CHECK(out.at("results").at("boolq") == g.at("boolq").at("results"));
  CHECK(out.at("results").at("wikitext").at("word_perplexity_stderr,none") == "N/A");
  CHECK(out.at("results").at("lambada_openai").at("perplexity_stderr,none").is_number());  // lm-eval's bootstrap
  // per_item: every metric's documents, n and the stderr the results give.
  const json& items = out.at("per_item").at("results/piqa/acc,none");
  CHECK(items.at("ids") == json{"0", "1", "2"});
  CHECK(items.at("n") == 3);
  CHECK(items.at("stderr") == out.at("results").at("piqa").at("acc_stderr,none"));
  CHECK(out.at("per_item").at("results/lambada_openai/perplexity,none").at("stderr") ==
        out.at("results").at("lambada_openai").at("perplexity_stderr,none"));
  const json& words = out.at("per_item").at("results/wikitext/word_perplexity,none");
  CHECK(words.at("aggregation") == "weighted_perplexity");
  CHECK(words.at("weights").size() == 3);
  CHECK(words.at("stderr_method") == "bootstrap");
  CHECK(out.at("perplexity_stderr_delta_method").at("lambada_openai").at("perplexity_stderr_delta_method,none").is_number());
  CHECK(out.at("higher_is_better").at("wikitext").at("word_perplexity") == false);
  // A record missing for a task is refused, not silently averaged over fewer documents.
  records.pop_back();
  CHECK(test::error_of<Error>([&] { build_lm_eval_result(identity, records); }).find("documents scored") != std::string::npos);
}

TEST_CASE("lm_eval task python string semantics") {
  CHECK(py_strip("\u00a0\t x y \u3000\n") == "x y");
  CHECK(py_lstrip(" \x1c a ") == "a ");
  CHECK(py_capitalize("hELLO wORLD") == "Hello world");
  CHECK(py_capitalize("élan VITAL") == "Élan vital");
  CHECK(py_capitalize("ßa") == "Ssa");
  CHECK(py_capitalize("") == "");
  CHECK(py_lower_first("Ünder") == "ünder");
  CHECK(py_drop_last("toe.") == "toe");
  CHECK(py_drop_last("café") == "caf");
  CHECK(py_len("naïve") == 5);
  CHECK(py_split_whitespace_count(" a  b\u00a0c ") == 5);  // ['', 'a', 'b', 'c', '']
  CHECK(py_split_whitespace_count("") == 1);
  CHECK(py_replace("a   b", "  ", " ") == "a  b");
  CHECK(wikitext_detokenizer("a @-@ b ( c ) \" d \" s ' x") == "a-b (c) \"d\" s' x");
}

TEST_CASE("lm_eval task bad input errors name the task, file, line and field") {
  test::TempDir dir("lm_eval_tasks");
  const std::string d = dir.path.string();
  CHECK(test::error_of<Error>([] { parse_task_list("piqa,mmlu"); }).find("unknown task 'mmlu'") != std::string::npos);
  CHECK(test::error_of<Error>([] { parse_task_list("piqa,piqa"); }).find("given twice") != std::string::npos);

  const std::string missing = test::error_of<Error>([&] { load_task_docs(task_config("piqa"), d, -1); });
  CHECK(missing.find(d + "/piqa.jsonl") != std::string::npos);
  CHECK(missing.find(d + "/piqa.parquet") != std::string::npos);
  CHECK(missing.find("validation") != std::string::npos);

  write_file(d + "/piqa.jsonl", "{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 0}\n"
                                "{\"goal\": \"g\", \"sol1\": \"a\", \"label\": 1}\n");
  const std::string field = test::error_of<Error>([&] { load_task_docs(task_config("piqa"), d, -1); });
  CHECK(field.find("piqa: " + d + "/piqa.jsonl line 2") != std::string::npos);
  CHECK(field.find("missing field 'sol2'") != std::string::npos);
  // --limit 1 stops before the bad document, as lm-eval would never read it.
  CHECK(load_task_docs(task_config("piqa"), d, 1).docs.size() == 1);

  write_file(d + "/boolq.jsonl", "{\"question\": \"q\", \"passage\": \"p\", \"idx\": 0, \"label\": 2}\n");
  const std::string range = test::error_of<Error>([&] { load_task_docs(task_config("boolq"), d, -1); });
  CHECK(range.find("boolq: " + d + "/boolq.jsonl line 1") != std::string::npos);
  CHECK(range.find("label 2 is out of range for 2 choices") != std::string::npos);

  // One bad document per task, and the words its error must hold.
  const struct {
    const char *task, *jsonl, *says;
  } bad[] = {
      {"arc_easy", "{\"id\": \"x\", \"question\": \"q\", \"choices\": {\"text\": [\"a\"], \"label\": [\"A\"]}, \"answerKey\": \"B\"}\n",
       "'answerKey': 'B'"},
      {"winogrande", "{\"sentence\": \"no blank\", \"option1\": \"a\", \"option2\": \"b\", \"answer\": \"1\"}\n", "no '_'"},
      {"hellaswag",
       "{\"activity_label\": \"a\", \"ctx_a\": \"b\", \"ctx_b\": \"c\", \"endings\": [\"x\", \"y\"], \"label\": \"\"}\n",
       "field 'label'"},
      {"copa", "", "no documents"},
  };
  for (const auto& b : bad) {
    write_file(d + "/" + b.task + ".jsonl", b.jsonl);
    CHECK_MESSAGE(test::error_of<Error>([&] { load_task_docs(task_config(b.task), d, -1); }).find(b.says) != std::string::npos,
                  b.task);
  }

  write_file(d + "/sciq.jsonl", "{}\n");
  write_file(d + "/sciq.parquet", "");
  CHECK(test::error_of<Error>([&] { load_task_docs(task_config("sciq"), d, -1); }).find("keep one") != std::string::npos);
}
