// jieba.cut port against Python jieba 0.42.1: tests/fixtures/jieba/cut_goldens.jsonl holds
// list(jieba.cut(text)) for ~3000 sentences and data_stats.json the sizes and spot values of the
// loaded data, both made by tests/tools/make_jieba_goldens.py. The data comes from Debian's
// python3-jieba (or $FOXEVAL_JIEBA_DIR); without it these tests fail, saying how to install it.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "data/errors.h"
#include "tasks/longbench/jieba.h"
#include "data/python/unicode.h"
#include "tests/temp_files.h"

using nlohmann::json;
namespace lb = foxeval::longbench;

namespace {

std::string fixture(const std::string& name) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/jieba/" + name; }

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return json::parse(in);
}

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A tiny data folder: a few dictionary words and a hand-made HMM, in the literal forms the
// parser takes (\u escapes, plain UTF-8, \x, double quotes, u prefix, ints, trailing commas).
void write_tiny_data(const std::filesystem::path& dir) {
  write_file(dir / "dict.txt", "中文 10 n\n分词 20 v\n中文 5 n\n");
  write_file(dir / "finalseg/prob_start.py",
             "from __future__ import unicode_literals\n# start\nP={'B': -0.5, \"E\": -3.14e+100,\n u'M': -3.14e100, 'S': -1,}\n");
  write_file(dir / "finalseg/prob_trans.py",
             "P={'B': {'E': -0.5, 'M': -0.9}, 'E': {'B': -0.6, 'S': -0.8},\n 'M': {'E': -0.3, 'M': -1.2}, 'S': {'B': -0.7, 'S': -0.6}}\n");
  write_file(dir / "finalseg/prob_emit.py",
             "P={'B': {'\\u4e00': -3.5, '测': -2.0}, 'E': {'\\x41': -1.0, '试': -2.5},\n 'M': {}, 'S': {'\\U00004e01': -4.25}}\n");
}

}  // namespace

TEST_CASE("jieba: the loaded data is complete (sizes and spot values equal Python's)") {
  const json stats = read_json_file(fixture("data_stats.json"));
  const lb::JiebaDataStats got = lb::jieba_data_stats();
  CHECK(got.dict_words == stats.at("dict_words").get<size_t>());
  CHECK(got.prefix_entries == stats.at("prefix_entries").get<size_t>());
  CHECK(got.total_freq == stats.at("total_freq").get<int64_t>());
  CHECK(got.start_states == stats.at("start_states").get<size_t>());
  CHECK(got.trans_entries == stats.at("trans_entries").get<size_t>());
  for (const char s : {'B', 'M', 'E', 'S'}) {
    INFO("emit_P['" << s << "']");
    CHECK(got.emit_entries.at(s) == stats.at("emit_entries").at(std::string(1, s)).get<size_t>());
  }
  const lb::JiebaTokenizer& jt = lb::default_jieba();
  const json& spots = stats.at("spot_values");
  REQUIRE(spots.size() > 40);
  for (const json& sp : spots) {
    INFO(sp.dump());
    const std::string table = sp.at("table"), state = sp.at("state");
    const double want = std::strtod(sp.at("hex").get<std::string>().c_str(), nullptr);  // float.hex(): exact
    CHECK(want == sp.at("value").get<double>());
    double v = 0;
    if (table == "start") {
      v = jt.start_prob(state[0]);
    } else if (table == "trans") {
      v = jt.trans_prob(state[0], sp.at("key").get<std::string>()[0]);
    } else {
      const std::u32string key = foxeval::utf8_to_u32(sp.at("key").get<std::string>(), "spot key");
      REQUIRE(key.size() == 1);
      v = jt.emit_prob(state[0], key[0]);
    }
    CHECK(v == want);  // bit-equal: strtod and Python's float() both round correctly
  }
}

TEST_CASE("jieba: cut equals Python jieba.cut on every golden sentence") {
  const std::vector<json> goldens = read_jsonl(fixture("cut_goldens.jsonl"));
  REQUIRE(goldens.size() >= 3000);
  size_t mismatches = 0;
  std::string first;
  for (const json& g : goldens) {
    const std::string text = g.at("text");
    const std::vector<std::string> want = g.at("tokens");
    const std::vector<std::string> got = lb::jieba_cut(text);
    if (got == want) continue;
    if (mismatches++ == 0) first = "text=" + json(text).dump() + "\n  got=" + json(got).dump() + "\n want=" + json(want).dump();
  }
  INFO("first mismatch: " << first);
  CHECK(mismatches == 0);
}

TEST_CASE("jieba: invalid UTF-8 input throws foxeval::Error") {
  CHECK_THROWS_AS(lb::jieba_cut("\xe4\xb8"), foxeval::Error);
  CHECK_THROWS_AS(lb::jieba_cut("ok\xff"), foxeval::Error);
  CHECK(lb::jieba_cut("").empty());
}

TEST_CASE("jieba: a missing FOXEVAL_JIEBA_DIR folder is an error naming it") {
  const char* old = std::getenv("FOXEVAL_JIEBA_DIR");
  const std::string saved = old ? old : "";
  const std::string missing = "/nonexistent/foxeval_jieba_dir_for_test";
  ::setenv("FOXEVAL_JIEBA_DIR", missing.c_str(), 1);
  CHECK(lb::jieba_data_dir() == missing);
  const std::string msg = foxeval::test::error_of<foxeval::Error>([&] { lb::JiebaTokenizer t(lb::jieba_data_dir()); });
  if (old) ::setenv("FOXEVAL_JIEBA_DIR", saved.c_str(), 1); else ::unsetenv("FOXEVAL_JIEBA_DIR");
  CHECK(msg.find(missing) != std::string::npos);
  CHECK(msg.find("apt-get install python3-jieba") != std::string::npos);
}

TEST_CASE("jieba: a tiny data folder loads, and malformed files are errors naming file and line") {
  foxeval::test::TempDir tmp("jieba");
  const std::filesystem::path dir = tmp.path;
  write_tiny_data(dir);
  {
    const lb::JiebaTokenizer jt(dir.string());
    const lb::JiebaDataStats st = jt.stats();
    CHECK(st.dict_words == 3);
    CHECK(st.prefix_entries == 4);  // 中, 中文, 分, 分词
    CHECK(st.total_freq == 35);     // a repeated word adds both counts
    CHECK(st.trans_entries == 8);
    CHECK(st.emit_entries.at('B') == 2);
    CHECK(st.emit_entries.at('M') == 0);
    CHECK(jt.emit_prob('B', U'\u6d4b') == -2.0);
    CHECK(jt.emit_prob('E', U'A') == -1.0);
    CHECK(jt.emit_prob('S', U'\u4e01') == -4.25);
    CHECK(jt.emit_prob('M', U'\u4e01') == -3.14e100);
    CHECK(jt.start_prob('S') == -1.0);
    CHECK(jt.trans_prob('B', 'S') == -3.14e100);
    CHECK(jt.cut("中文分词 ok") == std::vector<std::string>{"中文", "分词", " ", "ok"});
  }
  struct Bad {
    std::string file, text, want;  // want: a piece of the message besides the file name
  };
  const std::vector<Bad> bad = {
      {"dict.txt", "中文 10\n分词 x\n", "line 2"},
      {"dict.txt", "中文 10\n\n", "line 2"},
      {"dict.txt", "中文 10\n分词 3 \xff\n", "line 2"},
      {"finalseg/prob_start.py", "P={'B': -0.5, 'E': -1, 'M': -1}\n", "no state 'S'"},
      {"finalseg/prob_trans.py", "P={'B': {'E': -0.5,\n 'X': -1}}\n", "line 2"},
      {"finalseg/prob_emit.py", "P={'B': {'\\u4e00': -3.5,\n '\\u4e01': abc}}\n", "line 2"},
      {"finalseg/prob_emit.py", "P={'B': {'\\q': 1}}\n", "unsupported escape"},
  };
  for (const Bad& b : bad) {
    INFO(b.file << ": " << b.text);
    write_tiny_data(dir);
    write_file(dir / b.file, b.text);
    const std::string msg = foxeval::test::error_of<foxeval::Error>([&] { lb::JiebaTokenizer t(dir.string()); });
    CHECK(msg.find((dir / b.file).string()) != std::string::npos);
    CHECK(msg.find(b.want) != std::string::npos);
  }
  write_tiny_data(dir);
  std::filesystem::remove(dir / "finalseg/prob_emit.py");
  const std::string msg = foxeval::test::error_of<foxeval::Error>([&] { lb::JiebaTokenizer t(dir.string()); });
  CHECK(msg.find((dir / "finalseg/prob_emit.py").string()) != std::string::npos);
}
