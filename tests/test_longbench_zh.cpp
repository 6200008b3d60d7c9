// LongBench as released, against the official Python: the Chinese metrics (jieba-segmented
// qa_f1_zh_score and rouge_zh_score, lsht, passage_retrieval_zh) and numeric answers (passage_count's
// files hold "answers": [15], scored through str()), from tests/fixtures/longbench/metrics_zh_golden.json
// (tests/tools/longbench_zh_golden.py with metrics.py/eval.py, jieba 0.42.1, rouge 1.0.1); and the
// readers' side: Python's str()/repr of answers, a pred folder scored file by file, data.zip read
// in place.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <zip.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "data/errors.h"
#include "data/python/json_dumps.h"
#include "data/json_file.h"
#include "data/records.h"
#include "data/zip_archive.h"
#include "tasks/longbench/longbench_data.h"
#include "tasks/longbench/longbench_official.h"
#include "tasks/longbench/metrics.h"
#include "data/python/numbers.h"
#include "tests/temp_files.h"

using nlohmann::json;
namespace lb = foxeval::longbench;
namespace fs = std::filesystem;

namespace {

const json& golden() {
  static const json g =
      foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/longbench/metrics_zh_golden.json");
  return g;
}

std::vector<std::string> answer_strings(const json& answers) {
  std::vector<std::string> out;
  for (const json& a : answers) out.push_back(foxeval::python_str(a, "answer"));
  return out;
}

std::vector<std::string> classes_of(const json& c) {
  return c.is_null() ? std::vector<std::string>{} : c.get<std::vector<std::string>>();
}

double number(const json& j) { return j.is_string() ? std::nan("") : j.get<double>(); }
bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// A zip archive of (name, bytes) members, deflated; a name ending in '/' is a folder.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z);
  for (const auto& [name, bytes] : members) {
    if (!name.empty() && name.back() == '/') {
      REQUIRE(zip_dir_add(z, name.c_str(), ZIP_FL_ENC_UTF_8) >= 0);
      continue;
    }
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    REQUIRE(src);
    REQUIRE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8) >= 0);
  }
  REQUIRE(zip_close(z) == 0);  // the buffers are read here: `members` outlives it
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("longbench zh: every Chinese and numeric-answer metric equals metrics.py") {
  const json& cases = golden().at("metric");
  REQUIRE(cases.size() > 1000);
  int zero_by_recursion = 0;
  for (const json& c : cases) {
    const std::string ds = c.at("dataset");
    const std::string answer = foxeval::python_str(c.at("answer"), "answer");
    INFO(ds << " prediction=" << json(c.at("prediction")).dump() << " answer=" << c.at("answer").dump());
    const double got = lb::metric(ds, c.at("prediction"), answer, c.at("all_classes").get<std::vector<std::string>>());
    CHECK(std::fabs(got - c.at("value").get<double>()) <= 1e-12);
    zero_by_recursion += c.at("value").get<double>() == 0.0 && c.at("prediction").get<std::string>().size() > 3000;
  }
  CHECK(zero_by_recursion >= 3);  // the rouge recursion limit is crossed, one frame deeper than rouge_score's
}

TEST_CASE("longbench zh: normalize_zh_answer equals metrics.py's") {
  for (const json& c : golden().at("normalize_zh")) {
    INFO(json(c.at("text")).dump());
    CHECK(lb::normalize_zh_answer(c.at("text")) == c.at("normalized").get<std::string>());
  }
}

TEST_CASE("longbench zh: eval.py's scorer and scorer_e on Chinese and numeric-answer record sets") {
  const json& sets = golden().at("sets");
  REQUIRE(sets.size() >= 20);
  for (const json& s : sets) {
    const std::string ds = s.at("dataset");
    INFO(ds << " with " << s.at("predictions").size() << " records");
    std::vector<std::vector<std::string>> answers, classes;
    for (const json& a : s.at("answers")) answers.push_back(answer_strings(a));
    for (const json& c : s.at("all_classes")) classes.push_back(classes_of(c));
    const auto predictions = s.at("predictions").get<std::vector<std::string>>();
    CHECK(lb::score_dataset(ds, predictions, answers, classes) == s.at("score").get<double>());
    const json e = lb::score_dataset_e(ds, predictions, answers, classes, s.at("lengths").get<std::vector<int64_t>>());
    for (const char* bucket : {"0-4k", "4-8k", "8k+"})
      CHECK(same_bits(e.at(bucket).get<double>(), number(s.at("score_e").at(bucket))));
  }
}

TEST_CASE("longbench: answers are Python's str() of any JSON scalar; floats as repr") {
  CHECK(foxeval::python_str(json(15), "a") == "15");
  CHECK(foxeval::python_str(json(-3), "a") == "-3");
  CHECK(foxeval::python_str(json(7.5), "a") == "7.5");
  CHECK(foxeval::python_str(json(15.0), "a") == "15.0");
  CHECK(foxeval::python_str(json(true), "a") == "True");
  CHECK(foxeval::python_str(json(nullptr), "a") == "None");
  CHECK(foxeval::python_str(json("段落3"), "a") == "段落3");
  CHECK(foxeval::python_str(json(18446744073709551615ULL), "a") == "18446744073709551615");
  CHECK(foxeval::test::error_of<foxeval::Error>([] { foxeval::python_str(json::array({1}), "an answer"); }).find("an answer must be") == 0);
  // repr's switch to exponents at 1e16 and below 1e-4 (nlohmann's dump switches at 1e15).
  CHECK(foxeval::python_float_repr(1e15) == "1000000000000000.0");
  CHECK(foxeval::python_float_repr(1e16) == "1e+16");
  CHECK(foxeval::python_float_repr(0.0001) == "0.0001");
  CHECK(foxeval::python_float_repr(0.00001) == "1e-05");
  CHECK(foxeval::python_float_repr(-0.0) == "-0.0");
  CHECK(foxeval::python_float_repr(1.2345678901234568e+17) == "1.2345678901234568e+17");
  CHECK(foxeval::python_float_repr(5e-324) == "5e-324");
  CHECK(foxeval::python_float_repr(0.1) == "0.1");
  CHECK(foxeval::python_json_dumps(json::array({1e15, 2.5, 3})) == "[1000000000000000.0, 2.5, 3]");
  // pred.py writes json_obj["answers"] as loaded: the number stays a number.
  CHECK(lb::pred_line({{"pred", "3"}, {"answers", {3}}, {"all_classes", nullptr}, {"length", 9}}) ==
        R"({"pred": "3", "answers": [3], "all_classes": null, "length": 9})");
}

TEST_CASE("longbench score: every file that can be scored is; the others are named with the reason") {
  foxeval::test::TempDir dir("longbench_zh_score");
  // A golden passage_count set with numeric answers, and a Chinese one, in pred.py's layout.
  const json* count = nullptr;
  const json* zh = nullptr;
  for (const json& s : golden().at("sets")) {
    if (s.at("dataset") == "passage_count" && !count) count = &s;
    if (s.at("dataset") == "multifieldqa_zh" && !zh) zh = &s;
  }
  REQUIRE(count);
  REQUIRE(zh);
  for (const json* s : {count, zh}) {
    std::string text;
    for (size_t i = 0; i < s->at("predictions").size(); ++i)
      text += lb::pred_line({{"pred", s->at("predictions")[i]}, {"answers", s->at("answers")[i]},
                             {"all_classes", s->at("all_classes")[i]}, {"length", s->at("lengths")[i]}}) +
              "\n";
    const std::string name = s->at("dataset").get<std::string>() + ".jsonl";
    write_file(dir.path / name, text);
    write_file(dir.path / (name + ".done"), "");
  }
  // lsht whose last record has all_classes null: eval.py stops with a TypeError there.
  write_file(dir.path / "lsht.jsonl",
             "{\"pred\": \"体育\", \"answers\": [\"体育\"], \"all_classes\": [\"体育\", \"军事\"], \"length\": 5}\n"
             "{\"pred\": \"军事\", \"answers\": [\"军事\"], \"all_classes\": null, \"length\": 5}\n");
  write_file(dir.path / "lsht.jsonl.done", "");
  write_file(dir.path / "nonsense.jsonl", "{\"pred\": \"x\", \"answers\": [\"x\"], \"all_classes\": null}\n");
  write_file(dir.path / "nonsense.jsonl.done", "");
  write_file(dir.path / "trec.jsonl", "not json yet\n");  // no .done: pred.py still writing

  const lb::PredDirScores s = lb::score_pred_dir(dir.path.string(), false);
  CHECK(s.scores.at("passage_count").get<double>() == count->at("score").get<double>());
  CHECK(s.scores.at("multifieldqa_zh").get<double>() == zh->at("score").get<double>());
  CHECK(s.scores.size() == 2);
  REQUIRE(s.unscored.size() == 3);
  CHECK(s.unscored.at("lsht.jsonl").find("all_classes\": null") != std::string::npos);
  CHECK(s.unscored.at("nonsense.jsonl").find("no metric for dataset \"nonsense\"") != std::string::npos);
  CHECK(s.unscored.at("trec.jsonl").find("no .done") != std::string::npos);
  const lb::PredDirScores e = lb::score_pred_dir(dir.path.string(), true);
  CHECK(e.scores.at("passage_count").at("0-4k").dump() == json(number(count->at("score_e").at("0-4k"))).dump());
}

TEST_CASE("longbench data: records and data.zip as LongBench releases them") {
  foxeval::test::TempDir dir("longbench_zip");
  const std::string record =
      R"({"input": "q", "context": "c", "answers": [15], "length": 5, "dataset": "passage_count", "language": "en", "all_classes": null, "_id": "x"})";
  write_file(dir.path / "data" / "passage_count.jsonl", record + "\n" + record + "\n");
  // Numbers among the answers are read; a list inside the answers is not an answer.
  const foxeval::DataSource file = foxeval::DataSource::on_disk((dir.path / "data" / "passage_count.jsonl").string());
  const std::vector<lb::Record> records = lb::read_task_records(file);
  REQUIRE(records.size() == 2);
  CHECK(lb::answers_of(records[0].data) == std::vector<std::string>{"15"});
  CHECK(records[0].data.at("answers").dump() == "[15]");
  write_file(dir.path / "bad" / "passage_count.jsonl",
             R"({"input": "q", "context": "c", "answers": [[1]], "length": 5, "dataset": "d", "language": "en", "all_classes": null, "_id": "x"})"
             "\n");
  CHECK(foxeval::test::error_of<foxeval::Error>([&] {
          lb::read_task_records(foxeval::DataSource::on_disk((dir.path / "bad" / "passage_count.jsonl").string()));
        }).find("line 1: field 'answers' must be a list of strings or numbers") != std::string::npos);

  // A member of an archive is read in place; errors name the archive and the member. Its digest is
  // its unzipped file's (same name, same bytes).
  const std::string zip = (dir.path / "data.zip").string();
  write_zip(zip, {{"data/", ""}, {"data/passage_count.jsonl", record + "\n"}, {"README", "x"}});
  CHECK(foxeval::zip_member_names(zip) == std::vector<std::string>{"data/passage_count.jsonl", "README"});
  const foxeval::DataSource member = lb::task_data_source(zip, "passage_count", false);
  CHECK(member == foxeval::DataSource::zip_member(zip, "data/passage_count.jsonl"));
  CHECK(member.name() == "passage_count.jsonl");
  const std::vector<lb::Record> from_zip = lb::read_task_records(member);
  REQUIRE(from_zip.size() == 1);
  CHECK(from_zip[0].data == records[0].data);
  CHECK(foxeval::record_where(member, 0) == zip + ":data/passage_count.jsonl line 1");
  write_file(dir.path / "one" / "passage_count.jsonl", record + "\n");
  const foxeval::DataSource unzipped = lb::task_data_source((dir.path / "one").string(), "passage_count", false);
  CHECK(!unzipped.in_zip());
  CHECK(member.sha256() == unzipped.sha256());
  CHECK(foxeval::digest_sources({member}) == foxeval::digest_sources({unzipped}));
  CHECK(foxeval::digest_sources({member}) != foxeval::digest_sources({file}));  // other bytes
  // A member that is not .jsonl is refused by name (parquet is read from files only).
  write_zip((dir.path / "pq.zip").string(), {{"data/trec.parquet", "x"}});
  CHECK(foxeval::test::error_of<foxeval::Error>([&] {
          foxeval::read_records(foxeval::DataSource::zip_member((dir.path / "pq.zip").string(), "data/trec.parquet"));
        }).find("pq.zip:data/trec.parquet: inside a .zip archive records are read from .jsonl members") != std::string::npos);
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { lb::task_data_source(zip, "trec", false); })
            .find("the archive has no trec.jsonl") != std::string::npos);
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { foxeval::read_zip_member(zip, "data/passage_count.jsonl", 10); })
            .find("more than the 10 foxeval reads") != std::string::npos);
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { foxeval::read_zip_member(zip, "nope", 10); })
            .find("no member 'nope'") != std::string::npos);
  const std::string twice = (dir.path / "twice.zip").string();
  write_zip(twice, {{"a/trec.jsonl", record}, {"b/trec.jsonl", record}});
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { lb::task_data_source(twice, "trec", false); })
            .find("2 members named trec.jsonl") != std::string::npos);
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { foxeval::zip_member_names((dir.path / "data" / "passage_count.jsonl").string()); })
            .find("cannot open as a zip archive") != std::string::npos);
  CHECK(foxeval::test::error_of<foxeval::Error>([&] { lb::task_data_source((dir.path / "data" / "passage_count.jsonl").string(), "x", false); })
            .find("data/ folder or its data.zip") != std::string::npos);
}
