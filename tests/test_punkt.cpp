// nltk Punkt port (data/python/punkt.h) against nltk.sent_tokenize: tests/fixtures/ruler/
// punkt_goldens.jsonl holds ~4000 generated texts and nltk 3.10.4's sentences for them, with the
// synthetic punkt_tab parameters beside it (tests/tools/punkt_goldens.py).
#include <doctest/doctest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/python/punkt.h"
#include "tests/temp_files.h"

using nlohmann::json;

namespace {

const std::string kFixtures = std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/ruler/";
const std::string kLangDir = kFixtures + "nltk_data/tokenizers/punkt_tab/english";

}  // namespace

TEST_CASE("punkt: sent_tokenize equals nltk's over generated texts") {
  const foxeval::PunktParameters params = foxeval::load_punkt_params(kLangDir);
  CHECK(params.abbrev_types.count(U"e.g") == 1);
  CHECK(params.collocations.count({U"s", U"bach"}) == 1);
  std::ifstream in(kFixtures + "punkt_goldens.jsonl");
  REQUIRE(in.good());
  size_t n = 0, multi = 0, mismatches = 0;
  for (std::string line; std::getline(in, line);) {
    const json g = json::parse(line);
    const std::vector<std::string> got = foxeval::punkt_sent_tokenize(params, g["text"].get<std::string>());
    if (json(got) != g["sentences"]) {
      if (++mismatches <= 5) MESSAGE("text " << g["text"].dump() << "\n  nltk:   " << g["sentences"].dump() << "\n  foxeval: " << json(got).dump());
    }
    multi += g["sentences"].size() > 1;
    ++n;
  }
  CHECK(n > 4000);
  CHECK(multi > 3000);  // the texts do split
  CHECK(mismatches == 0);
}

TEST_CASE("punkt: finding and reading punkt_tab") {
  foxeval::test::TempDir tmp("punkt");
  const std::filesystem::path root = tmp.path / "data";
  const char* old = getenv("NLTK_DATA");
  const std::string saved = old ? old : "";
  setenv("NLTK_DATA", (tmp.path.string() + ":" + kFixtures + "nltk_data").c_str(), 1);
  CHECK(foxeval::find_punkt_tab("english") == std::filesystem::path(kLangDir) );
  try {
    foxeval::find_punkt_tab("klingon");
    FAIL("expected an error");
  } catch (const foxeval::Error& e) {
    CHECK(std::string(e.what()).find("punkt_tab/klingon") != std::string::npos);
    CHECK(std::string(e.what()).find("nltk.downloader punkt_tab") != std::string::npos);
  }
  if (old) setenv("NLTK_DATA", saved.c_str(), 1); else unsetenv("NLTK_DATA");

  std::filesystem::create_directories(root);
  for (const char* f : {"abbrev_types.txt", "sent_starters.txt", "collocations.tab"}) std::ofstream(root / f) << "x\n";
  std::ofstream(root / "ortho_context.tab") << "the\t12\nbad line\n";
  CHECK_THROWS_WITH_AS(foxeval::load_punkt_params(root), doctest::Contains("ortho_context.tab:2"), foxeval::Error);
  std::filesystem::remove(root / "abbrev_types.txt");
  CHECK_THROWS_WITH_AS(foxeval::load_punkt_params(root), doctest::Contains("abbrev_types.txt"), foxeval::Error);
}
