// LongBench prompts, truncation and files against the official pred.py/eval.py behaviour:
// token ids equal tests/tools/longbench_pred_reference.py (pred.py's steps with tiktoken's GPT-2 and
// the JSONGPT2Tokenizer escaping) on synthetic records of 8 tasks, cut far below their length.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "data/errors.h"
#include "data/python/json_dumps.h"
#include "data/tokenizer.h"
#include "tasks/longbench/longbench_config.h"
#include "tasks/longbench/longbench_data.h"
#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/longbench_prompt_set.h"
#include "tasks/longbench/longbench_prompts.h"
#include "data/python/json_escape.h"
#include "tasks/longbench/metrics.h"
#include "tests/temp_files.h"

namespace foxeval {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using test::TempDir;

const fs::path kFixtures = fs::path(FOXEVAL_SOURCE_DIR) / "tests" / "fixtures" / "longbench";
const char* kAllTasks = "qasper,multifieldqa_en,multifieldqa_zh,trec,samsum,lcc,repobench-p,gov_report";

const Gpt2Tokenizer& tokenizer() {
  static const Gpt2Tokenizer tok = Gpt2Tokenizer::load("");
  return tok;
}

std::vector<nlohmann::json> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

void check_against_golden(int64_t max_length) {
  longbench::PromptSettings s;
  s.data_dir = (kFixtures / "data").string();
  s.tasks = kAllTasks;
  s.max_length = max_length;
  const longbench::PromptSet set = longbench::build_prompt_set(s, tokenizer());
  const std::vector<nlohmann::json> golden = read_lines(kFixtures / fmt::format("prompts_{}.jsonl", max_length));
  REQUIRE(set.prompts.size() == golden.size());
  int64_t cut = 0;
  for (size_t i = 0; i < golden.size(); ++i) {
    CAPTURE(golden[i]["task"]);
    CAPTURE(golden[i]["index"]);
    CHECK(set.prompts[i].task == golden[i]["task"]);
    CHECK(set.prompts[i].record.index == golden[i]["index"]);
    CHECK(set.prompts[i].record.data["_id"] == golden[i]["_id"]);
    CHECK(set.prompts[i].ids == golden[i]["input_ids"].get<std::vector<int64_t>>());
    cut += tokenizer().encode(longbench::format_template(set.config.prompt.at(set.prompts[i].task), set.prompts[i].record.data, "t"))
               .size() > static_cast<size_t>(max_length);
  }
  CHECK(cut >= 8);  // the goldens exercise the truncation, not only short prompts
}

}  // namespace

TEST_CASE("longbench prompts: token ids equal pred.py's (Python rendition), max_length 300 and 512") {
  check_against_golden(300);
  check_against_golden(512);
}

TEST_CASE("longbench prompts: cuts through surrogate pairs and escapes equal pred.py's") {
  // Limits where a half ends or starts inside an astral character's "\ud83d\ude42": Python keeps the
  // lone surrogates in its str and json.dumps writes them back.
  const std::vector<nlohmann::json> golden = read_lines(kFixtures / "prompts_sweep.jsonl");
  REQUIRE(golden.size() >= 100);
  const longbench::TaskConfig config = longbench::load_task_config(longbench::bundled_config_dir());
  std::map<std::string, std::vector<longbench::Record>> records;
  for (const char* task : {"multifieldqa_zh", "qasper", "samsum"})
    records[task] = longbench::read_task_records(DataSource::on_disk((kFixtures / "data" / (std::string(task) + ".jsonl")).string()));
  for (const nlohmann::json& g : golden) {
    const std::string task = g["task"];
    CAPTURE(task);
    CAPTURE(g["max_length"]);
    CAPTURE(g["index"]);
    const nlohmann::json& r = records[task].at(g["index"].get<size_t>()).data;
    const std::string prompt = longbench::format_template(config.prompt.at(task), r, task);
    CHECK(longbench::prompt_ids(tokenizer(), prompt, g["max_length"]) == g["input_ids"].get<std::vector<int64_t>>());
  }
}

TEST_CASE("longbench prompts: re-escaping keeps lone surrogates as Python does") {
  CHECK(python_reescape("ab\\ud83d") == "ab\\ud83d");
  CHECK(python_reescape("\\ude42 x") == "\\ude42 x");
  CHECK(python_reescape("\\ud83d\\ude42") == "\\ud83d\\ude42");  // a pair stays a pair
  CHECK(python_reescape("\\\\ud83d") == "\\\\ud83d");            // an escaped backslash, not an escape
  CHECK(python_reescape("x\\ud83d\\u") == "x\\ud83d");           // fallback path drops the cut escape
  CHECK(python_reescape("\\u00e9\\n\\\"") == "\\u00e9\\n\\\"");
  CHECK(python_reescape("n\\u00") == "n");
}

TEST_CASE("longbench prompts: str.format fields, escapes and errors") {
  const nlohmann::json r = {{"context", "C {x} }"}, {"input", "Q"}, {"length", 42}, {"answers", {"a"}}};
  CHECK(longbench::format_template("{{a}} {context}|{input}|{length}}}", r, "t") == "{a} C {x} }|Q|42}");
  CHECK(longbench::format_template("no fields", r, "t") == "no fields");
  CHECK(error_of<Error>([&] { longbench::format_template("{nope}", r, "task 'trec'"); }).find("task 'trec'") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("{nope}", r, "task 'trec'"); }).find("'nope'") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("a } b", r, "t"); }).find("single '}'") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("a { b", r, "t"); }).find("single '{'") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("{}", r, "t"); }).find("positional") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("{context!r}", r, "t"); }).find("not supported") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::format_template("{answers}", r, "t"); }).find("'answers' is array") != std::string::npos);
}

TEST_CASE("longbench prompts: short prompts are not cut; a cut prompt keeps both ends") {
  const Gpt2Tokenizer& tok = tokenizer();
  CHECK(longbench::prompt_ids(tok, "Hello world", 300) == tok.encode("Hello world", true, true));
  std::string long_text = "BEGIN ";
  for (int i = 0; i < 400; ++i) long_text += "filler words here ";
  long_text += "END";
  const std::vector<int64_t> ids = longbench::prompt_ids(tok, long_text, 100);
  CHECK(ids.front() == 50256);
  CHECK(ids.size() <= 101);
  const std::string text = tok.decode(ids, true, true);
  CHECK(text.rfind("BEGIN", 0) == 0);
  CHECK(text.size() >= 3);
  CHECK(text.substr(text.size() - 3) == "END");
  CHECK(error_of<Error>([&] { longbench::prompt_ids(tok, long_text, 1); }).find("--max-length") != std::string::npos);
}

TEST_CASE("longbench config: the bundled official files, task selection") {
  const longbench::TaskConfig c = longbench::load_task_config(longbench::bundled_config_dir());
  CHECK(c.prompt.size() == 21);
  CHECK(c.maxlen.at("gov_report") == 512);
  CHECK(c.maxlen.at("hotpotqa") == 32);
  CHECK(c.prompt.at("lcc") == "Please complete the code given below. \n{context}Next line of code:\n");
  CHECK(longbench::select_tasks(c, "", false).size() == 14);
  CHECK(longbench::select_tasks(c, "", true).size() == 11);
  CHECK(longbench::select_tasks(c, "lsht,trec", false) == std::vector<std::string>{"lsht", "trec"});
  CHECK(error_of<Error>([&] { longbench::select_tasks(c, "trec,nope", false); }).find("'nope'") != std::string::npos);
  CHECK(error_of<Error>([&] { longbench::select_tasks(c, "trec,,lcc", false); }).find("empty") != std::string::npos);

  TempDir dir("longbench_config");
  write_file(dir.path / "dataset2prompt.json", R"({"a": "{context}", "b": "x"})");
  write_file(dir.path / "dataset2maxlen.json", R"({"a": 3})");
  CHECK(error_of<Error>([&] { longbench::load_task_config(dir.path.string()); }).find("task 'b'") != std::string::npos);
  write_file(dir.path / "dataset2maxlen.json", R"({"a": 3, "b": 0})");
  CHECK(error_of<Error>([&] { longbench::load_task_config(dir.path.string()); }).find("positive integer") != std::string::npos);
}

TEST_CASE("longbench data: a malformed line or a missing field names file, line and field") {
  TempDir dir("longbench_data");
  const std::string good =
      R"({"input": "q", "context": "c", "answers": ["a"], "length": 5, "dataset": "trec", "language": "en", "all_classes": null, "_id": "x"})";
  write_file(dir.path / "trec.jsonl", good + "\n" + good + "\n{\"input\": \n");
  std::string err = error_of<Error>([&] { longbench::read_task_records(longbench::task_data_source(dir.path.string(), "trec", false)); });
  CHECK(err.find("trec.jsonl line 3") != std::string::npos);

  nlohmann::json bad = nlohmann::json::parse(good);
  bad.erase("answers");
  write_file(dir.path / "trec.jsonl", good + "\n" + bad.dump() + "\n");
  err = error_of<Error>([&] { longbench::read_task_records(DataSource::on_disk((dir.path / "trec.jsonl").string())); });
  CHECK(err.find("trec.jsonl line 2") != std::string::npos);
  CHECK(err.find("'answers'") != std::string::npos);

  bad = nlohmann::json::parse(good);
  bad["length"] = "5";
  write_file(dir.path / "trec.jsonl", bad.dump() + "\n");
  err = error_of<Error>([&] { longbench::read_task_records(DataSource::on_disk((dir.path / "trec.jsonl").string())); });
  CHECK(err.find("line 1: field 'length'") != std::string::npos);

  CHECK(error_of<Error>([&] { longbench::task_data_source(dir.path.string(), "qasper", true); }).find("qasper_e.jsonl") != std::string::npos);
}

TEST_CASE("longbench files: pred lines and result.json are byte-equal to Python's json.dump") {
  // Expected strings printed by Python 3.11: json.dumps({...}, ensure_ascii=False) and
  // json.dumps(..., ensure_ascii=False, indent=4).
  nlohmann::json rr = {{"answers", {"x", "y"}}, {"all_classes", nullptr}, {"length", 12}, {"task", "t"}};
  rr["pred"] = std::string("a\x7f", 2) + std::string(1, '\0') + "\x1f\u2028\u00e9\"\\\n\t\b\f\r\U0001F600";
  CHECK(longbench::pred_line(rr) ==
        "{\"pred\": \"a\x7f\\u0000\\u001f\u2028\u00e9\\\"\\\\\\n\\t\\b\\f\\r\U0001F600\", \"answers\": [\"x\", \"y\"], "
        "\"all_classes\": null, \"length\": 12}");
  nlohmann::json scores = nlohmann::json::object();
  scores["b"] = {{"0-4k", std::nan("")}, {"4-8k", 23.45}, {"8k+", 100.0}};
  scores["a"] = 0.1;
  scores["c"] = nlohmann::json::array();
  scores["d"] = nlohmann::json::object();
  CHECK(foxeval::python_json_dumps(scores, 4) ==
        "{\n    \"a\": 0.1,\n    \"b\": {\n        \"0-4k\": NaN,\n        \"4-8k\": 23.45,\n        \"8k+\": 100.0\n    },\n"
        "    \"c\": [],\n    \"d\": {}\n}");
}

TEST_CASE("longbench score: a pred folder is scored as eval.py, files without .done skipped") {
  TempDir dir("longbench_score");
  const std::vector<nlohmann::json> trec = {
      {{"pred", "\n\nLocation\nmore"}, {"answers", {"Location"}}, {"all_classes", {"Location", "Entity"}}, {"length", 100}},
      {{"pred", "Entity"}, {"answers", {"Location"}}, {"all_classes", {"Location", "Entity"}}, {"length", 5000}},
      {{"pred", "none"}, {"answers", {"Entity"}}, {"all_classes", {"Location", "Entity"}}, {"length", 9000}}};
  std::string text;
  for (const auto& r : trec) text += longbench::pred_line(r) + "\n";
  write_file(dir.path / "trec.jsonl", text);
  write_file(dir.path / "trec.jsonl.done", "");
  write_file(dir.path / "qasper.jsonl", "not even json\n");  // no .done: pred.py still writing; skipped
  std::vector<std::string> preds;
  std::vector<std::vector<std::string>> answers, classes;
  std::vector<int64_t> lengths;
  for (const auto& r : trec) {
    preds.push_back(r["pred"]);
    answers.push_back(r["answers"]);
    classes.push_back(r["all_classes"]);
    lengths.push_back(r["length"]);
  }
  const nlohmann::json s = longbench::score_pred_dir(dir.path.string(), false).scores;
  CHECK(s.size() == 1);
  CHECK(s.at("trec").get<double>() == longbench::score_dataset("trec", preds, answers, classes));
  CHECK(s.at("trec").get<double>() == doctest::Approx(33.33));
  const nlohmann::json se = longbench::score_pred_dir(dir.path.string(), true).scores;
  CHECK(se.at("trec") == longbench::score_dataset_e("trec", preds, answers, classes, lengths));

  write_file(dir.path / "qasper.jsonl.done", "");
  // A bad line: that file is not scored (named, with the line), the others still are.
  const longbench::PredDirScores bad = longbench::score_pred_dir(dir.path.string(), false);
  CHECK(bad.scores == s);
  CHECK(bad.unscored.at("qasper.jsonl").find("qasper.jsonl line 1") != std::string::npos);
}

}  // namespace foxeval
