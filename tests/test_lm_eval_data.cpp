// `--data hf` and lm-eval's output layout: the cache rules (datasets' naming, hash choice, the hub's
// split conventions, save_to_disk) on the fixture caches of tests/tools/make_lm_eval_cache_fixtures.py,
// and lm-eval 0.4.4's string rules (sanitize_model_name, _get_model_name, json.dumps, sha256).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/datasets_cache.h"
#include "data/dataset_rows.h"
#include "data/errors.h"
#include "data/content_digest.h"
#include "tasks/lm_eval/lm_eval_output.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "data/python/json_dumps.h"
#include "tests/temp_files.h"

using namespace foxeval;
using namespace foxeval::lm_eval;

namespace {

std::string caches(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/lm_eval/caches/" + rel; }

struct Env {
  Env(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~Env() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("lm_eval data: datasets' camelcase_to_snakecase") {
  CHECK(camelcase_to_snakecase("SuperGLUE") == "super_glue");
  CHECK(camelcase_to_snakecase("ai2_arc") == "ai2_arc");
  CHECK(camelcase_to_snakecase("HellaSwag") == "hella_swag");
  CHECK(camelcase_to_snakecase("ABCDef2Gh") == "abc_def2_gh");
}

TEST_CASE("lm_eval data: the datasets cache root follows datasets' variables") {
  Env a("HF_DATASETS_CACHE", ""), b("HF_HOME", "~/hfhome"), c("HOME", "/home/u");
  CHECK(datasets_cache_root().path == "/home/u/hfhome/datasets");
  Env d("HF_DATASETS_CACHE", "~/dc");
  CHECK(datasets_cache_root().path == "/home/u/dc");
}

TEST_CASE("lm_eval data: each task's split is found in the fixture caches, decoys aside") {
  Env a("HF_DATASETS_CACHE", caches("datasets")), b("HF_HUB_CACHE", caches("hub"));
  std::vector<std::string> looked;
  auto arc = find_in_datasets_cache({"allenai/ai2_arc", "ARC-Easy", "test"}, &looked);
  REQUIRE(arc);
  CHECK(arc->files.size() == 2);  // two shards, in order
  CHECK(arc->files[0].find("ai2_arc-test-00000-of-00002.arrow") != std::string::npos);
  CHECK(arc->num_rows == 3);
  CHECK(!find_in_datasets_cache({"allenai/ai2_arc", "ARC-Challenge", "test"}, &looked));
  auto arcc = find_in_hub_cache({"allenai/ai2_arc", "ARC-Challenge", "test"}, &looked);
  REQUIRE(arcc);
  CHECK(arcc->files.size() == 1);
  CHECK(arcc->files[0].find("ARC-Challenge/test-00000-of-00001.parquet") != std::string::npos);
  auto obqa = find_in_hub_cache({"openbookqa", "main", "test"}, &looked);
  REQUIRE(obqa);
  CHECK(obqa->files.size() == 2);
  auto sciq = find_in_hub_cache({"allenai/sciq", "", "test"}, &looked);
  REQUIRE(sciq);
  CHECK(sciq->files[0].find("data/test-00000-of-00001.parquet") != std::string::npos);
  auto saved = find_in_saved_dataset(caches("saved/piqa"), "validation", &looked);
  REQUIRE(saved);
  CHECK(read_dataset_rows(saved->files).size() == 4);
  // Every task of tasks.json resolves to documents equal (keys in order aside) to the folder's.
  for (const auto& [name, c] : task_configs()) {
    CAPTURE(name);
    const TaskDocs hf = load_task_docs(c, "hf", -1);
    const TaskDocs dir = load_task_docs(c, std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/lm_eval/data", -1);
    REQUIRE(hf.raw.size() == dir.raw.size());
    for (size_t i = 0; i < hf.raw.size(); ++i) CHECK(sorted_json(hf.raw[i]) == sorted_json(dir.raw[i]));
  }
}

TEST_CASE("lm_eval data: lm-eval 0.4.4's names, JSON and hashes") {
  CHECK(sanitize_model_name("org/name") == "org__name");
  CHECK(sanitize_model_name("../a//b:c") == "..__a__b__c");
  CHECK(model_name_from_args("pretrained=org/m,dtype=bfloat16") == "org/m");
  CHECK(model_name_from_args("dtype=x,model=m2") == "m2");
  CHECK(model_name_from_args("dtype=x") == "");
  nlohmann::ordered_json doc = {{"b", 1}, {"a", {1.0, "x\n\u00e9"}}, {"e", nlohmann::ordered_json::object()}};
  // Non-finite metrics (a perplexity overflowing) stay NaN/Infinity, as Python writes them.
  CHECK(python_json_dumps(to_ordered_json(nlohmann::json::array({std::nan(""), 1.0 / 0.0, 2, 0.5, "s", true, nullptr}))) ==
        "[NaN, Infinity, 2, 0.5, \"s\", true, null]");
  CHECK(python_json_dumps(doc) == "{\"b\": 1, \"a\": [1.0, \"x\\n\u00e9\"], \"e\": {}}");
  CHECK(python_json_dumps(doc, 2) == "{\n  \"b\": 1,\n  \"a\": [\n    1.0,\n    \"x\\n\u00e9\"\n  ],\n  \"e\": {}\n}");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("lm_eval data: a hub split with a shard missing is not read; configs and splits cannot climb") {
  foxeval::test::TempDir dir("hubpartial");
  namespace fs = std::filesystem;
  const fs::path repo = fs::path(dir.path) / "datasets--org--name";
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  fs::create_directories(repo / "refs");
  fs::create_directories(repo / "snapshots" / commit / "data");
  std::ofstream(repo / "refs" / "main") << commit;
  for (const char* f : {"validation-00000-of-00003.parquet", "validation-00002-of-00003.parquet"})
    std::ofstream(repo / "snapshots" / commit / "data" / f) << "x";
  Env hub("HF_HUB_CACHE", dir.path.string());
  std::vector<std::string> looked;
  CHECK_FALSE(find_in_hub_cache({"org/name", "", "validation"}, &looked).has_value());
  REQUIRE(looked.size() == 1);
  CHECK(looked[0].find("shard 00001 of 00003 is missing") != std::string::npos);
  // The missing shard arrives: the whole split is found, in shard order.
  std::ofstream(repo / "snapshots" / commit / "data" / "validation-00001-of-00003.parquet") << "x";
  const auto found = find_in_hub_cache({"org/name", "", "validation"}, &looked);
  REQUIRE(found.has_value());
  CHECK(found->files.size() == 3);
  // A config or split that would name a path outside the cache is refused before anything is read.
  for (const HfSplit& bad : {HfSplit{"org/name", "../../x", "validation"}, HfSplit{"org/name", "/etc", "validation"},
                             HfSplit{"org/name", "", "../validation"}}) {
    CHECK_THROWS_AS(find_in_hub_cache(bad, &looked), foxeval::Error);
    CHECK_THROWS_AS(find_in_datasets_cache(bad, &looked), foxeval::Error);
  }
}
