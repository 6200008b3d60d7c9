// `foxeval loss --text`: documents from an HF cache layout (PG-19-like parquet shards), a folder and
// NarrativeQA's repeated stories; tokens equal tiktoken's (the official JSONGPT2Tokenizer, goldens by
// tests/tools/make_loss_text_fixtures.py); per-position loss equals the official per-token loss recipe
// (input [bos] + tokens[:-1], labels tokens, mean over documents per position) computed here on the
// golden tokens; skipped documents counted; --pack; the token cache.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "data/json_file.h"
#include "data/safetensors.h"
#include "data/text_docs.h"
#include "models/engine.h"
#include "models/registry.h"
#include "tasks/loss/loss.h"
#include "tasks/loss/loss_text.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

const std::string kModel = test::shared_path("fixtures/trained/fox_pro_tiny_pg");

// The fixture's hub cache, and a datasets cache that holds nothing (it is searched first).
struct FixtureCaches {
  test::TempDir empty;
  test::ScopedEnv hub{"HF_HUB_CACHE", test::source_path("tests/fixtures/loss_text/hub").c_str()};
  test::ScopedEnv datasets{"HF_DATASETS_CACHE", empty.path.c_str()};
};

std::vector<std::vector<int64_t>> golden(const std::string& key) {
  return read_json(test::source_path("tests/fixtures/loss_text/golden.json")).at(key).get<std::vector<std::vector<int64_t>>>();
}

std::vector<std::vector<int64_t>> split_docs(const DocTokens& t) {
  std::vector<std::vector<int64_t>> docs;
  for (size_t d = 0; d + 1 < t.offsets.size(); ++d)
    docs.emplace_back(t.tokens.begin() + t.offsets[d], t.tokens.begin() + t.offsets[d + 1]);
  return docs;
}

// The official per-token loss recipe on windows of tokens [n, T]: mean over windows per position.
std::vector<double> recipe(const std::vector<std::vector<int64_t>>& windows) {
  auto model = load_model(kModel, RunOptions{});
  const int64_t n = static_cast<int64_t>(windows.size()), T = static_cast<int64_t>(windows[0].size());
  at::Tensor labels = at::empty({n, T}, at::kLong);
  for (int64_t i = 0; i < n; ++i) labels[i] = at::tensor(windows[i], at::kLong);
  at::Tensor input = at::cat({at::full({n, 1}, 50256, at::kLong), labels.slice(1, 0, T - 1)}, 1);
  at::Tensor mean = token_logprobs(*model, input, labels).neg().to(at::kDouble).mean(0).contiguous();
  return std::vector<double>(mean.data_ptr<double>(), mean.data_ptr<double>() + T);
}

LossSettings text_settings(const std::string& dir, const std::string& source) {
  LossSettings s;
  s.model_dir = kModel;
  s.text_source = source;
  s.out_path = dir + "/result.json";
  s.seq_len = 256;
  s.batch_size = 2;
  return s;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// A known corpus's documents as `foxeval loss --text SOURCE` reads them: its default field (which
// must be `field`) applied, then read from the hub cache.
TextDocs corpus_docs(const std::string& source, const std::string& field) {
  TextSourceSpec spec{source, "", "", ""};
  apply_corpus_defaults(spec, false);
  CHECK(spec.field == field);
  return read_text_docs(spec);
}

}  // namespace

TEST_CASE("loss --text: PG-19 parquet shards in the hub cache tokenize as tiktoken (the official tokenizer)") {
  FixtureCaches caches;
  const TextDocs docs = corpus_docs("hf:deepmind/pg19:test", "text");
  CHECK(docs.identity["source"] == "hub cache");
  CHECK(docs.identity["files"].size() == 2);
  REQUIRE(docs.docs.size() == 7);
  const DocTokens t = tokenize_docs(docs.docs, docs.digest, text_tokenizer(find_model_files(kModel)), "", 2);
  CHECK(split_docs(t) == golden("pg19_json_gpt2_ids"));
  // The same books as a folder (a.jsonl + b.txt): the same text, so the same digest.
  const TextDocs folder = read_text_docs({test::source_path("tests/fixtures/loss_text/folder"), "text", "", ""});
  CHECK(folder.docs == docs.docs);
  CHECK(folder.digest == docs.digest);
}

TEST_CASE("loss --text: NarrativeQA's stories are read once each, from document.text") {
  FixtureCaches caches;
  const TextDocs docs = corpus_docs("hf:deepmind/narrativeqa:test", "document.text");
  CHECK(docs.docs.size() == 2);
  CHECK(docs.duplicates == 3);
  const DocTokens t = tokenize_docs(docs.docs, docs.digest, text_tokenizer(find_model_files(kModel)), "", 1);
  CHECK(split_docs(t) == golden("narrativeqa_json_gpt2_ids"));
}

TEST_CASE("loss --text: per-position loss equals the official recipe on the same tokens; short documents skipped") {
  FixtureCaches caches;
  test::TempDir dir;
  const nlohmann::json r = run_loss(text_settings(dir.path.string(), "hf:deepmind/pg19:test"));
  // Books of 404, 151, 269, 62, 892, 209, 391 tokens at seq_len 256: four windows, three skipped.
  std::vector<std::vector<int64_t>> windows;
  int64_t dropped = 0, skipped_tokens = 0;
  for (const auto& doc : golden("pg19_json_gpt2_ids")) {
    if (doc.size() < 256) {
      skipped_tokens += static_cast<int64_t>(doc.size());
      continue;
    }
    windows.emplace_back(doc.begin(), doc.begin() + 256);
    dropped += static_cast<int64_t>(doc.size()) - 256;
  }
  CHECK(r["windows"] == 4);
  CHECK(r["rows"] == 4);
  CHECK(r["documents_skipped"] == 3);
  CHECK(r["tokens_skipped"] == skipped_tokens);
  CHECK(r["tokens_dropped"] == dropped);
  // Exact sums of 2^-32 steps over 4 windows: the only difference is that rounding (< 1e-9).
  CHECK(max_diff(r["val/loss_per_token"].get<std::vector<double>>(), recipe(windows)) < 1e-6);
  CHECK(r["identity"]["data_digest"] == read_text_docs({"hf:deepmind/pg19:test", "text", "", ""}).digest);
  CHECK(r["identity"]["text"]["pack"] == false);
}

TEST_CASE("loss --text --pack: documents joined by the separator, cut into windows") {
  FixtureCaches caches;
  test::TempDir dir;
  LossSettings s = text_settings(dir.path.string(), "hf:deepmind/pg19:test");
  s.pack = true;
  const nlohmann::json r = run_loss(s);
  std::vector<int64_t> stream;
  for (const auto& doc : golden("pg19_json_gpt2_ids")) {
    stream.insert(stream.end(), doc.begin(), doc.end());
    stream.push_back(50256);
  }
  std::vector<std::vector<int64_t>> windows;
  for (size_t i = 0; i + 256 <= stream.size(); i += 256) windows.emplace_back(stream.begin() + i, stream.begin() + i + 256);
  CHECK(r["windows"] == static_cast<int64_t>(windows.size()));
  CHECK(r["rows"] == 7);
  CHECK(r["documents_skipped"] == 0);
  CHECK(r["tokens_dropped"] == static_cast<int64_t>(stream.size() % 256));
  CHECK(max_diff(r["val/loss_per_token"].get<std::vector<double>>(), recipe(windows)) < 1e-6);
}

TEST_CASE("loss --text: tokens are cached beside the output and read back, not tokenized again") {
  FixtureCaches caches;
  test::TempDir dir;
  const TextDocs docs = read_text_docs({"hf:deepmind/pg19:test", "text", "", ""});
  const TextTokenizer tok = text_tokenizer(find_model_files(kModel));
  const std::string base = (dir.path / "out.json").string();
  const DocTokens first = tokenize_docs(docs.docs, docs.digest, tok, base);
  CHECK_FALSE(first.from_cache);
  CHECK(std::filesystem::is_regular_file(first.cache_path));
  const DocTokens again = tokenize_docs(docs.docs, docs.digest, tok, base);
  CHECK(again.from_cache);
  CHECK(again.cache_path == first.cache_path);
  CHECK(again.tokens == first.tokens);
  CHECK(again.offsets == first.offsets);
  // Other text: another key, another file.
  std::vector<std::string> other = docs.docs;
  other[0] += " more";
  const DocTokens changed = tokenize_docs(other, text_docs_digest(other), tok, base);
  CHECK_FALSE(changed.from_cache);
  CHECK(changed.cache_path != first.cache_path);
}

TEST_CASE("loss --text: a missing field or split names the file, row and field") {
  FixtureCaches caches;
  auto err = [](TextSourceSpec spec) { return test::error_of([&] { read_text_docs(spec); }); };
  const std::string field = err({"hf:deepmind/pg19:test", "body", "", ""});
  CHECK(field.find("test-00000-of-00002.parquet row 0") != std::string::npos);
  CHECK(field.find("'body'") != std::string::npos);
  CHECK(err({"hf:deepmind/pg19:validation", "text", "", ""}).find("datasets.load_dataset('deepmind/pg19', split='validation')") !=
        std::string::npos);
  CHECK(err({"hf:deepmind/pg19", "text", "", ""}).find("hf:ORG/NAME:SPLIT") != std::string::npos);
}

TEST_CASE("loss --text: held-out essays as text give the trained fixture's official rows, and the same loss as those rows") {
  // The trained fixture's reference rows are the first 1187 JSON-GPT2 tokens of three held-out
  // essays, tokenized by the official code; its official per-token loss on them is checked against
  // `loss --data` in test_loss_task.cpp. The same essays as .txt files through --text must give
  // those tokens, and then the very same sums as the rows.
  test::TempDir dir;
  std::filesystem::create_directory(dir.path / "essays");
  for (const char* n : {"gh.txt", "apple.txt", "founders.txt"})  // the reference's rows 0, 1, 2
    std::filesystem::copy_file(test::shared_path(std::string("data/PaulGrahamEssays/") + n), dir.path / "essays" / n);
  SafetensorsFile ref(kModel + "/reference.safetensors");
  const at::Tensor rows = ref.read("rows").to(at::kLong).contiguous();
  const TextDocs docs = read_text_docs({(dir.path / "essays").string(), "text", "", ""});  // name order: apple, founders, gh
  const DocTokens t = tokenize_docs(docs.docs, docs.digest, text_tokenizer(find_model_files(kModel)), "", 2);
  const int row_of[3] = {1, 2, 0};
  for (int d = 0; d < 3; ++d) {
    const std::vector<int64_t> mine(t.tokens.begin() + t.offsets[d], t.tokens.begin() + t.offsets[d] + 1187);
    const int64_t* want = rows[row_of[d]].data_ptr<int64_t>();
    CHECK(mine == std::vector<int64_t>(want, want + 1187));
  }
  LossSettings text = text_settings(dir.path.string(), (dir.path / "essays").string());
  text.seq_len = 1187;
  text.batch_size = 1;
  const nlohmann::json a = run_loss(text);
  // The rows as an int64 .npy, through the token-rows path.
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 1187), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  {
    std::ofstream out((dir.path / "rows.npy").string(), std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const uint16_t n = static_cast<uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&n), 2);
    out << header;
    out.write(static_cast<const char*>(rows.data_ptr()), rows.numel() * 8);
  }
  LossSettings npy;
  npy.model_dir = kModel;
  npy.data_path = (dir.path / "rows.npy").string();
  npy.out_path = (dir.path / "rows.json").string();
  const nlohmann::json b = run_loss(npy);
  REQUIRE(a["windows"] == 3);
  CHECK(a["val/loss_per_token"] == b["val/loss_per_token"]);  // exact sums: the document order cannot matter
}
