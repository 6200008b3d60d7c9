// `foxeval niah`: prompts equal the official prompt.py logic (goldens from
// tests/tools/niah_reference.py), the offline scorer, the result builder, the judge's prompt and
// rating, prediction folders and the heatmap.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/tokenizer.h"
#include "tasks/niah/heatmap.h"
#include "tasks/niah/niah_judge.h"
#include "tasks/niah/niah_prompts.h"
#include "tasks/niah/niah_score.h"
#include "tasks/niah/niah_task.h"
#include "data/python/json_escape.h"
#include "tests/temp_files.h"

namespace fs = std::filesystem;
using namespace foxeval;
using foxeval::test::error_of;
using foxeval::test::TempDir;

namespace {

std::string src(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/" + rel; }

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// Every golden prompt file of `golden_dir` equals what PromptBuilder writes for that cell.
// Returns how many of them hold a lone surrogate (a cut between an emoji's two escapes).
int check_goldens(const std::string& mode_name, const std::string& haystack, const std::string& golden_dir,
                   const std::vector<int64_t>& lengths, const std::vector<int64_t>& depths) {
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load("");
  const niah::Mode mode = niah::load_mode(mode_name);
  const niah::PromptDefinition def = niah::load_prompt_definition();
  niah::PromptBuilder b(tok, haystack, lengths, mode.needle, mode.retrieval_question, def);
  int checked = 0, lone_surrogates = 0;
  for (int64_t L : lengths)
    for (int64_t D : depths) {
      const std::string name = niah::cell_stem(def.file_prefix, L, D) + "_prompts.json";
      const std::string want = read_text_file(golden_dir + "/" + name);
      CAPTURE(name);
      CHECK(niah::prompt_file_text(b.escaped_user_message(L, D)) == want);
      // pred.py's ids: the user message (json.loads of the file) encoded with BOS. A message
      // with a lone surrogate has no UTF-8 form: then its escaped text, as the file holds it.
      const nlohmann::json file = nlohmann::json::parse(want, nullptr, false);
      if (!file.is_discarded()) {
        CHECK(b.prompt_ids(L, D) == tok.encode(file[1]["content"].get<std::string>(), true, true));
      } else {
        const std::string head = "[{\"role\": \"system\", \"content\": \"\"}, {\"role\": \"user\", \"content\": \"";
        CHECK(b.prompt_ids(L, D) == tok.encode(want.substr(head.size(), want.size() - head.size() - 3), true, false));
        ++lone_surrogates;
      }
      ++checked;
    }
  CHECK(checked == static_cast<int>(lengths.size() * depths.size()));
  return lone_surrogates;
}

}  // namespace

// The essays (../shared, never committed, so no goldens of them here) are compared with the
// reference live in tests/cli_niah_test.sh.
TEST_CASE("niah prompts equal the official logic on a tricky haystack (cuts in escapes, short lengths)") {
  int lone = 0;
  for (const char* mode : {"standard", "easy"})
    lone += check_goldens(mode, src("tests/fixtures/niah/haystack_tricky"), src("tests/fixtures/niah/tricky_") + mode,
                          {201, 215, 260, 300, 457, 800}, {0, 7, 33, 50, 90, 100});
  CHECK(lone > 0);  // the fixture reaches the lone-surrogate path
}

TEST_CASE("niah grid: the paper's defaults, validation") {
  const niah::Mode m = niah::load_mode("standard");
  CHECK(m.lengths == std::vector<int64_t>{1000, 4100, 7200, 10300, 13400, 16500, 19600, 22700, 25800, 28900, 32000});
  CHECK(m.depths == std::vector<int64_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  CHECK(niah::linspace_rounded(0, 5, 3) == std::vector<int64_t>{0, 2, 5});  // 2.5 rounds to even
  CHECK(error_of<Error>([] { niah::validate_grid({1000, 200}, {0}, 200); }).find("200-token buffer") != std::string::npos);
  CHECK(error_of<Error>([] { niah::validate_grid({1000}, {0, 101}, 200); }).find("--depths: 101") != std::string::npos);
  CHECK(error_of<Error>([] { niah::validate_grid({1000, 1000}, {0}, 200); }).find("twice") != std::string::npos);
  CHECK(error_of<Error>([] { niah::validate_grid({201}, {0, 100}, 200); }).empty());
  const std::string e = error_of<Error>([] { niah::load_mode("hard"); });
  CHECK(e.find("unknown NIAH mode 'hard'") != std::string::npos);
  CHECK(e.find("standard, easy") != std::string::npos);
  CHECK(niah::cell_stem("Huggingface", 4100, 10) == "Huggingface_len_4100_depth_1000");
  CHECK(niah::prompt_file_text("a\\nb") ==
        "[{\"role\": \"system\", \"content\": \"\"}, {\"role\": \"user\", \"content\": \"a\\nb\"}]");
}

TEST_CASE("niah haystack: glob's files in code-point order, universal newlines, clear errors") {
  TempDir d("niah_hay");
  CHECK(error_of<Error>([&] { niah::haystack_files(d.path.string()); }).find("no .txt files") != std::string::npos);
  write_file(d.path / "b.txt", "B\r\nb\rb");
  write_file(d.path / "a.txt", "A");
  write_file(d.path / "Z.txt", "Z");
  write_file(d.path / ".hidden.txt", "H");
  write_file(d.path / "c.TXT", "C");
  const std::vector<std::string> files = niah::haystack_files(d.path.string());
  REQUIRE(files.size() == 3);
  CHECK(fs::path(files[0]).filename() == "Z.txt");  // 'Z' < 'a' in code points
  CHECK(fs::path(files[1]).filename() == "a.txt");
  CHECK(niah::read_haystack_file(files[2]) == "B\nb\nb");
  write_file(d.path / "bad.txt", "ok\xff");
  const std::string e = error_of<Error>([&] { niah::read_haystack_file((d.path / "bad.txt").string()); });
  CHECK(e.find("bad.txt: not UTF-8 at byte 2") != std::string::npos);
}

TEST_CASE("niah text: Python's decode and re-escape keep lone surrogates and drop bad escapes") {
  CHECK(python_reescape("caf\\u00e9 \\\"q\\\"") == "caf\\u00e9 \\\"q\\\"");
  CHECK(python_reescape("emoji \\ud83d") == "emoji \\ud83d");  // json.loads keeps a lone surrogate
  CHECK(python_reescape("\\ud83d\\ude00") == "\\ud83d\\ude00");
  // Truncated escapes make json.loads fail: unicode_escape "ignore" drops what was read.
  CHECK(python_reescape("abc\\u00") == "abc");
  CHECK(python_reescape("abc\\") == "abc");
  CHECK(python_reescape("x\\u12zz") == "xzz");
  // In the fallback a raw quote is kept, \/ stays two characters, octal escapes are read.
  CHECK(python_reescape("a\"b\\/\\101\\") == "a\\\"b\\\\/A");
}

TEST_CASE("niah offline score: right, partial, wrong, empty, answer after garbage") {
  const std::string answer = niah::load_mode("standard").answer;
  CHECK(niah::answer_key_words(answer) == std::vector<std::string>{"eat", "sandwich", "sit", "dolores", "park", "sunny", "day"});
  auto score = [&](const std::string& p) { return niah::score_prediction(p, answer); };
  const niah::CellScore right = score("eat a sandwich and sit in Dolores Park on a sunny day.");
  CHECK(right.score == 10);
  CHECK(right.contains_answer);
  CHECK(score("Eat a SANDWICH, and sit in Dolores-Park on a sunny day!!").score == 10);  // case and punctuation
  CHECK(score("sit in Dolores Park on a sunny day and eat a sandwich").score == 10);     // all key words, other order
  CHECK_FALSE(score("sit in Dolores Park on a sunny day and eat a sandwich").contains_answer);
  const niah::CellScore partial = score("eat a sandwich");  // 2 of 7 -> 1 + round(18/7 = 2.57) = 4
  CHECK(partial.score == 4);
  CHECK(partial.recall == doctest::Approx(2.0 / 7));
  CHECK(score("to sit in Dolores Park").score == 5);                 // 3 of 7 -> 1 + round(3.86)
  CHECK(score("go to the beach and have fun").score == 1);           // wrong
  CHECK(score("").score == 1);                                       // empty
  CHECK(score("1999 was a year. The end of it all\n\nThe best thing is to eat a sandwich and sit in Dolores Park on a sunny day")
            .score == 10);                                           // answer after garbage
  // Key words scattered over sentences do not add up: the best sentence counts.
  CHECK(score("I eat. A sandwich. Sit. Dolores. Park. Sunny. Day.").score == 2);
  CHECK(niah::python_strip(" \n\xC2\xA0 hi there \xE3\x80\x80\t") == "hi there");
  CHECK(niah::python_strip("\n\n") == "");
}

TEST_CASE("niah result: scores, grid means and judge means from records in grid order") {
  const nlohmann::json identity = {{"answer", "eat a sandwich and sit in Dolores Park on a sunny day"},
                                   {"mode", "standard"}, {"model", "/m/fox"}};
  std::vector<nlohmann::json> recs = {
      {{"length", 1000}, {"depth", 0}, {"prediction", "eat a sandwich and sit in Dolores Park on a sunny day"}},
      {{"length", 1000}, {"depth", 50}, {"prediction", "nothing"}},
      {{"length", 300}, {"depth", 0}, {"prediction", "eat a sandwich"}},
      {{"length", 300}, {"depth", 50}, {"prediction", ""}}};
  nlohmann::json r = niah::build_result(identity, recs);
  CHECK(r["cells"].size() == 4);
  CHECK(r["cells"][0]["score"] == 10);
  CHECK(r["cells"][2]["score"] == 4);
  CHECK(r["mean_by_length"][0]["length"] == 1000);  // grid order, not sorted
  CHECK(r["mean_by_length"][0]["mean"].get<double>() == doctest::Approx(5.5));
  CHECK(r["mean_by_length"][1]["mean"].get<double>() == doctest::Approx(2.5));
  CHECK(r["mean_by_depth"][0]["mean"].get<double>() == doctest::Approx(7));
  CHECK(r["mean"].get<double>() == doctest::Approx(4));
  CHECK(r["mode"] == "standard");
  CHECK_FALSE(r.contains("judge"));
  // per_item: one item per cell, named by it; n and the stderr of the mean over cells (scores
  // 10, 1, 4, 1: mean 4, sample variance 18, stderr sqrt(18 / 4)).
  CHECK(r["per_item"]["mean"]["ids"][1] == "length=1000,depth=50");
  CHECK(r["per_item"]["mean"]["values"] == nlohmann::json{10.0, 1.0, 4.0, 1.0});
  CHECK(r["per_item"]["mean"]["n"] == 4);
  CHECK(r["per_item"]["mean"]["stderr"].get<double>() == doctest::Approx(std::sqrt(18.0 / 4)));
  CHECK_FALSE(r["per_item"].contains("judge/mean"));
  for (size_t i = 0; i < recs.size(); ++i) recs[i]["judge_score"] = static_cast<int>(i + 1);
  r = niah::build_result(identity, recs);
  CHECK(r["judge"]["mean"].get<double>() == doctest::Approx(2.5));
  CHECK(r["per_item"]["judge/mean"]["values"] == nlohmann::json{1.0, 2.0, 3.0, 4.0});
  CHECK(error_of<Error>([&] { niah::build_result(nlohmann::json::object(), recs); }).find("answer") != std::string::npos);
}

TEST_CASE("niah judge: eval.py's prompt and [[rating]] pattern") {
  const niah::JudgePrompt p = niah::load_judge_prompt();
  const std::string msg = niah::judge_user_message(p, "Q?", "REF", "pred with {input}");
  CHECK(msg.rfind("[Instruction]\nPlease act as an impartial judge", 0) == 0);
  CHECK(msg.find("For this evaluation, you should primarily consider the following criteria:\naccuracy: \n    Score 1:") !=
        std::string::npos);
  CHECK(msg.find("[Ground truth]\nREF\nRemember") != std::string::npos);
  CHECK(msg.find("[Question]\nQ?\n\n[The Start of the Model's Answer]\npred with {input}\n[The End of the Model's Answer]") !=
        std::string::npos);
  CHECK(niah::parse_rating("Explanation... Rating: [[7]] and [[3]]") == 7);
  CHECK(niah::parse_rating("Rating: [7]") == -1);
  CHECK(niah::parse_rating("[[ 7 ]]") == -1);
}

TEST_CASE("niah prediction folder: pred.py's layout, unfinished cells skipped, grid order") {
  TempDir d("niah_pred");
  write_file(d.path / "Huggingface_len_4100_depth_0.txt", "  eat a sandwich\n");
  write_file(d.path / "Huggingface_len_4100_depth_0.txt.done", "");
  write_file(d.path / "Huggingface_len_1000_depth_1000.txt", "x");
  write_file(d.path / "Huggingface_len_1000_depth_1000.txt.done", "");
  write_file(d.path / "Huggingface_len_1000_depth_5000.txt", "unfinished");
  const std::vector<nlohmann::json> recs = niah::read_prediction_folder(d.path.string(), "Huggingface");
  REQUIRE(recs.size() == 2);
  CHECK(recs[0]["length"] == 1000);
  CHECK(recs[0]["depth"] == 10);
  CHECK(recs[1]["prediction"] == "eat a sandwich");
  write_file(d.path / "other.txt", "x");
  CHECK(error_of<Error>([&] { niah::read_prediction_folder(d.path.string(), "Huggingface"); }).find("other.txt") !=
        std::string::npos);
}

TEST_CASE("niah heatmap: the official colour map, one rect per cell") {
  CHECK(niah::score_colour(1) == "#f0496e");
  CHECK(niah::score_colour(5.5) == "#ebb839");
  CHECK(niah::score_colour(10) == "#0cd79f");
  CHECK(niah::score_colour(0) == "#f0496e");  // clamped
  niah::HeatmapPanel p{"FoX, standard", {1000, 2000}, {0, 50, 100}, {{1, 10}, {5, 5}, {10, std::nan("")}}};
  const std::string svg = niah::heatmap_svg({p}, 1500);
  size_t cells = 0;
  for (size_t pos = svg.find("<title>length"); pos != std::string::npos; pos = svg.find("<title>length", pos + 1)) ++cells;
  CHECK(cells == 6);
  CHECK(svg.find("no cell") != std::string::npos);
  // The training-length line, half way between the centres of the 1000 and 2000 columns.
  CHECK(svg.find("<line x1=\"118.0\"") != std::string::npos);
  CHECK(svg.find("Depth Percent") != std::string::npos);
  CHECK(svg.find("FoX, standard") != std::string::npos);
}
