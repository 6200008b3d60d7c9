// `foxeval table` and `foxeval report` over tests/fixtures/results (three models per kind, made by
// tests/tools/make_results_fixtures.py): the LaTeX of lm-eval and LongBench against hand-checked
// files (checked against the official table scripts, see the fixtures' README), Markdown marks,
// missing cells, CSV, labels, the errors, and the report page's structure.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/item_stats.h"
#include "tasks/lm_eval/lm_eval_table.h"
#include "tasks/longbench/longbench_table.h"
#include "tasks/loss/loss_table.h"
#include "tasks/niah/niah_table.h"
#include "tasks/results/report.h"
#include "tasks/result_kind.h"
#include "tasks/results/results_table.h"
#include "tests/temp_files.h"

using namespace foxeval;
using namespace foxeval::results;
using nlohmann::json;

namespace {

// The kinds the binary registers from its cli/ files.
[[maybe_unused]] const bool kinds_registered = [] {
  for (auto make : {longbench::table_kind, lm_eval::table_kind, loss::table_kind, niah::table_kind})
    register_kind(make());
  return true;
}();

std::string fixture(const std::string& name) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/results/" + name; }

std::vector<std::string> fixtures(const std::string& kind) {
  return {fixture(kind + "_fox_pro.json"), fixture(kind + "_mamba2.json"), fixture(kind + "_transformer_pro.json")};
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::filesystem::path& path, const json& j) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << j.dump(1);
}

// The Markdown line of a row: "| label | ... |".
std::string row_of(const std::string& markdown, const std::string& table_title_part, const std::string& label) {
  const size_t t = markdown.find(table_title_part);
  REQUIRE_MESSAGE(t != std::string::npos, table_title_part);
  const size_t r = markdown.find("\n| " + label + " |", t);
  REQUIRE_MESSAGE(r != std::string::npos, label);
  return markdown.substr(r + 1, markdown.find('\n', r + 1) - r - 1);
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t i = 1;
  while (i < row.size()) {
    const size_t j = row.find(" |", i);
    if (j == std::string::npos) break;
    out.push_back(row.substr(i + 1, j - i - 1));
    i = j + 2;
  }
  return out;
}

}  // namespace

TEST_CASE("results table: LaTeX of lm-eval results equals the hand-checked file") {
  CHECK(table_from_files(fixtures("lm_eval"), {}, Format::Latex) == read(fixture("expected_lm_eval.tex")));
}

TEST_CASE("results table: LaTeX of LongBench results equals the hand-checked file") {
  CHECK(table_from_files(fixtures("longbench"), {}, Format::Latex) == read(fixture("expected_longbench.tex")));
}

TEST_CASE("results table: Markdown marks the best bold and the second underlined, per direction") {
  std::vector<std::string> files;
  for (const char* kind : {"lm_eval", "longbench", "loss"})
    for (const std::string& f : fixtures(kind)) files.push_back(f);
  const std::string md = table_from_files(files, {}, Format::Markdown);
  // Tables in the paper's order, one row per model with the paper's labels.
  CHECK(md.find("### LongBench") < md.find("### lm-evaluation-harness"));
  CHECK(md.find("### lm-evaluation-harness") < md.find("### Held-out loss"));
  CHECK(md.find("| Model | Wiki. ppl↓ | LMB. ppl↓ | LMB. acc↑ | PIQA acc↑ | Hella. acc-n↑ |") != std::string::npos);

  const std::vector<std::string> fox = cells(row_of(md, "### lm-eval", "FoX (Pro)"));
  const std::vector<std::string> tf = cells(row_of(md, "### lm-eval", "Transformer (Pro)"));
  const std::vector<std::string> mamba = cells(row_of(md, "### lm-eval", "Mamba-2"));
  REQUIRE(fox.size() == 14);
  // Perplexity: lower is better (23.04 < 23.64 < 23.76).
  CHECK(fox[1] == "**23.04**");
  CHECK(tf[1] == "<u>23.64</u>");
  CHECK(mamba[1] == "23.76");
  // Accuracy x100, higher is better; COPA's tie is bold twice and the next value underlined.
  CHECK(mamba[4] == "**71.22**");
  CHECK(fox[9] == "**71.00**");
  CHECK(tf[9] == "**71.00**");
  CHECK(mamba[9] == "<u>69.00</u>");
  // Avg: np.mean of the ten accuracies.
  CHECK(fox[13] == "**55.40**");
  CHECK(mamba[13] == "<u>55.19</u>");
  CHECK(tf[13] == "54.68");

  // Loss: lower is better.
  // The loss fixtures were made with --seq-len 2048 (the paper: 65536): marked on the label, and
  // ranked among themselves (one setting).
  const std::vector<std::string> loss_m = cells(row_of(md, "### Held-out loss", "Mamba-2<sup>1</sup>"));
  const std::vector<std::string> loss_t = cells(row_of(md, "### Held-out loss", "Transformer (Pro)<sup>1</sup>"));
  CHECK(md.find("- <sup>1</sup> Not the paper's settings: --seq-len 2048 (paper: 65536)\n") != std::string::npos);
  CHECK(md.find("| Model | 512 | 1024 | 2048 |") != std::string::npos);
  CHECK(loss_m[1] == "**2.878**");
  CHECK(loss_t[1] == "3.099");

  // LongBench: eval.py's rounded scores as Python prints them; the 2WikiMQA tie is underlined twice.
  const std::vector<std::string> lb_fox = cells(row_of(md, "### LongBench", "FoX (Pro)"));
  const std::vector<std::string> lb_tf = cells(row_of(md, "### LongBench", "Transformer (Pro)"));
  CHECK(lb_fox[5] == "<u>15.5</u>");
  CHECK(lb_tf[5] == "<u>15.5</u>");
  CHECK(lb_tf[10] == "<u>47.0</u>");
}

TEST_CASE("results table: a missing cell shows a dash, never zero, and leaves the average missing") {
  test::TempDir dir("results_table");
  json partial = read_json(fixture("lm_eval_mamba2.json"));
  partial["results"].erase("boolq");
  partial["results"]["piqa"]["acc,none"] = "N/A";
  write(dir.path / "partial.json", partial);
  const std::string md = table_from_files({fixture("lm_eval_fox_pro.json"), (dir.path / "partial.json").string()},
                                          {}, Format::Markdown);
  const std::vector<std::string> m = cells(row_of(md, "### lm-eval", "Mamba-2"));
  CHECK(m[4] == "–");   // PIQA: "N/A"
  CHECK(m[12] == "–");  // BoolQ: absent
  CHECK(m[13] == "–");  // Avg over a missing task
  CHECK(m[1] == "<u>23.76</u>");  // of two values, the second
  // FoX's PIQA is the only value: best.
  CHECK(cells(row_of(md, "### lm-eval", "FoX (Pro)"))[4] == "**70.67**");

  // LongBench: Mamba-2's lcc could not be scored; NIAH: Mamba-2 has no easy run.
  std::vector<std::string> files = fixtures("longbench");
  for (const char* f : {"niah_fox_pro_standard.json", "niah_fox_pro_easy.json", "niah_mamba2_standard.json"})
    files.push_back(fixture(f));
  const std::string md2 = table_from_files(files, {}, Format::Markdown);
  const std::vector<std::string> lb = cells(row_of(md2, "### LongBench", "Mamba-2"));
  CHECK(lb[13] == "–");
  CHECK(lb[15] == "–");
  CHECK(md2.find("| Model | standard | easy |") != std::string::npos);
  CHECK(cells(row_of(md2, "### Needle", "Mamba-2")) == std::vector<std::string>{"Mamba-2", "<u>3.31</u>", "–"});
  CHECK(cells(row_of(md2, "### Needle", "FoX (Pro)")) == std::vector<std::string>{"FoX (Pro)", "**9.55**", "**9.80**"});

  // LaTeX shows "--" and CSV leaves the field empty.
  CHECK(table_from_files({fixture("lm_eval_fox_pro.json"), (dir.path / "partial.json").string()}, {}, Format::Latex)
            .find("& -- & ") != std::string::npos);
  const std::string csv = table_from_files({(dir.path / "partial.json").string()}, {}, Format::Csv);
  const std::string line = csv.substr(csv.find("\nMamba-2,") + 1);
  CHECK(line.rfind("Mamba-2,23.76,15.38,41.72,,", 0) == 0);  // PIQA empty
  CHECK(line.substr(line.size() - 3) == ",,\n");             // BoolQ and Avg empty
}

TEST_CASE("results table: CSV holds plain numbers at full precision") {
  const std::string csv = table_from_files(fixtures("lm_eval"), {}, Format::Csv);
  CHECK(csv.rfind("model,wikitext,lambada_openai_perp,lambada_openai,piqa,hellaswag,winogrande,arc_easy,arc_challenge,"
                  "copa,openbookqa,sciq,boolq,avg\n",
                  0) == 0);
  CHECK(csv.find("**") == std::string::npos);
  CHECK(csv.find("<u>") == std::string::npos);
  const size_t row = csv.find("\nFoX (Pro),");
  REQUIRE(row != std::string::npos);
  const std::string line = csv.substr(row + 1, csv.find('\n', row + 1) - row - 1);
  CHECK(line.rfind("FoX (Pro),23.04,14.91,", 0) == 0);
  CHECK(std::count(line.begin(), line.end(), ',') == 13);
}

TEST_CASE("results table: row labels from the model, --label, and conflicts") {
  test::TempDir dir("results_table");
  json r = read_json(fixture("lm_eval_fox_pro.json"));
  // A Hugging Face cache snapshot: the repo's name.
  r["header"]["settings"]["model"] = "/hub/models--zhixuan-lin--fox-pro-760m-longcrawl64-48b/snapshots/0a1b2c";
  CHECK(model_label(r, "x.json") == "FoX (Pro)");
  r["header"]["settings"]["model"] = "/ckpt/my-fox-125m/";
  r.erase("model");
  CHECK(model_label(r, "x.json") == "my-fox-125m");
  // No model: eval.py's result.json in the official pred/<model>/ layout.
  const json scores = read_json(fixture("longbench_transformer_pro.json"))["scores"];
  write(dir.path / "pred/delta_net-760m-longcrawl64-48b/result.json", scores);
  const ResultFile official = read_result((dir.path / "pred/delta_net-760m-longcrawl64-48b/result.json").string());
  CHECK(official.kind == "longbench");
  CHECK(official.label == "DeltaNet");

  // --label names rows; one per file.
  const std::string md = table_from_files({fixture("loss_fox_pro.json"), fixture("loss_mamba2.json")}, {"A", "B"}, Format::Markdown);
  CHECK(md.find("\n| A<sup>1</sup> | ") != std::string::npos);
  CHECK(md.find("\n| B<sup>1</sup> | ") != std::string::npos);
  CHECK(test::error_of([] { table_from_files({fixture("loss_fox_pro.json")}, {"A", "B"}, Format::Markdown); }).find("--label") !=
        std::string::npos);

  // --label FILE=LABEL names some files' rows; the others keep theirs.
  const std::string some = table_from_files({fixture("loss_fox_pro.json"), fixture("loss_mamba2.json")},
                                            {fixture("loss_mamba2.json") + "=Mine"}, Format::Markdown);
  CHECK(some.find("\n| Mine<sup>1</sup> | ") != std::string::npos);
  CHECK(some.find("\n| FoX (Pro)<sup>1</sup> | ") != std::string::npos);
  CHECK(test::error_of([] {
          table_from_files({fixture("loss_fox_pro.json"), fixture("loss_mamba2.json")},
                           {fixture("loss_mamba2.json") + "=Mine", "B"}, Format::Markdown);
        }).find("not both") != std::string::npos);

  // Two results filling the same cell of one row: both kept, the later one's row suffixed.
  const std::string twice =
      table_from_files({fixture("loss_fox_pro.json"), fixture("loss_mamba2.json")}, {"A", "A"}, Format::Markdown);
  CHECK(twice.find("\n| A<sup>1</sup> | ") != std::string::npos);
  CHECK(twice.find("\n| A (2)<sup>1</sup> | ") != std::string::npos);
  // Two different models with one folder name.
  json a = read_json(fixture("loss_fox_pro.json")), b = read_json(fixture("niah_mamba2_standard.json"));
  a["header"]["settings"]["model"] = "/x/ckpt";
  b["header"]["settings"]["model"] = "/y/ckpt";
  b.erase("model");
  write(dir.path / "a.json", a);
  write(dir.path / "b.json", b);
  const std::string md2 =
      table_from_files({(dir.path / "a.json").string(), (dir.path / "b.json").string()}, {}, Format::Markdown);
  CHECK(md2.find("| ckpt") != std::string::npos);
  CHECK(md2.find("| ckpt (2)") != std::string::npos);
}

TEST_CASE("results table: LongBench-E gives one table per length bucket") {
  test::TempDir dir("results_table");
  json r = read_json(fixture("longbench_fox_pro.json"));
  for (auto& [task, v] : r["scores"].items()) r["scores"][task] = {{"0-4k", 30.5}, {"4-8k", 20.25}, {"8k+", 10.0}};
  write(dir.path / "e.json", r);
  const std::vector<Table> tables = build_tables({read_result((dir.path / "e.json").string())});
  REQUIRE(tables.size() == 3);
  CHECK(tables[0].id == "longbench-e 0-4k");
  CHECK(tables[2].id == "longbench-e 8k+");
  CHECK(*tables[1].values[0][0] == 20.25);
  CHECK(*tables[1].values[0][14] == 20.25);  // Avg
  CHECK(render_latex(tables[2]).find("\\label{tab:long-bench-e-8k}") != std::string::npos);
  // A bucket without records (eval.py's NaN) is missing, not a number; a bucket empty for every
  // task makes no table and no chart.
  for (auto& [task, v] : r["scores"].items()) r["scores"][task]["8k+"] = std::nan("");
  r["scores"]["qasper"]["4-8k"] = std::nan("");
  write(dir.path / "e.json", r);
  const std::string md = table_from_files({(dir.path / "e.json").string()}, {}, Format::Markdown);
  CHECK(md.find("8k+") == std::string::npos);
  CHECK(md.find("nan") == std::string::npos);
  CHECK(md.find("4-8k") != std::string::npos);
  report::ReportOptions o;
  const std::string html = report::render_report({read_result((dir.path / "e.json").string())}, o);
  CHECK(html.find("8k+") == std::string::npos);
}

TEST_CASE("results table: errors name the file and what is wrong") {
  test::TempDir dir("results_table");
  write(dir.path / "part.json", {{"kind", "foxeval-part"}, {"task", "niah"}});
  write(dir.path / "other.json", {{"hello", 1}});
  write(dir.path / "task.json", {{"header", {{"task", "bench"}}}});
  const std::string part = (dir.path / "part.json").string(), other = (dir.path / "other.json").string(),
                    task = (dir.path / "task.json").string();
  CHECK(test::error_of([&] { read_result(part); }).find(part + ": a shard part; combine the parts with `foxeval merge`") == 0);
  CHECK(test::error_of([&] { read_result(other); }).find(other + ": not a result") == 0);
  CHECK(test::error_of([&] { read_result(task); }).find("header.task") != std::string::npos);
  CHECK(test::error_of([&] { read_result((dir.path / "none.json").string()); }).find("none.json") != std::string::npos);
  CHECK(test::error_of([] { parse_format("html"); }).find("--format 'html'") == 0);
}

TEST_CASE("results table: the report page holds every table, figure and header, self-contained") {
  std::vector<std::string> files;
  for (const char* kind : {"lm_eval", "longbench", "loss"})
    for (const std::string& f : fixtures(kind)) files.push_back(f);
  for (const char* f : {"niah_fox_pro_standard.json", "niah_transformer_pro_standard.json"}) files.push_back(fixture(f));
  std::vector<std::string> labels(files.size(), "");
  for (size_t i = 0; i < files.size(); ++i) labels[i] = read_result(files[i]).label;
  for (size_t i = 0; i < files.size(); ++i)
    if (labels[i] == "FoX (Pro)") labels[i] = "FoX <Pro> & co";  // escaped in the page
  const std::string html = report::render_report(read_results(files, labels), {});
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(html.find("<title>foxeval report</title>") != std::string::npos);
  CHECK(count("<div class=\"table-box\"") == 4);  // LongBench, lm-eval, loss, NIAH
  for (const char* id : {"table-longbench", "table-lm-eval", "table-loss", "table-niah", "figure-loss", "figure-niah-0",
                         "figure-niah-1", "figure-longbench"})
    CHECK_MESSAGE(html.find(std::string("id=\"") + id + "\"") != std::string::npos, id);
  CHECK(count("<svg") == 4);
  CHECK(count("<svg") == count("viewBox="));  // every figure can scale to its box
  CHECK(count("<div class=\"header-box\"") == files.size());
  CHECK(html.find("FoX &lt;Pro&gt; &amp; co") != std::string::npos);
  CHECK(html.find("FoX <Pro>") == std::string::npos);
  // Nothing to fetch: no scripts, no external references (the SVG namespace is a name, not a fetch).
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  for (size_t at = html.find("url("); at != std::string::npos; at = html.find("url(", at + 1))
    CHECK(html.compare(at, 5, "url(#") == 0);  // only the page's own fragments (the loss plot's clip path)
  CHECK(html.find("@import") == std::string::npos);
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    CHECK_MESSAGE((*it)[1].str().rfind('#', 0) == 0, (*it)[1].str());
}

TEST_CASE("results table: every LongBench task present gets a column in LongBench's order; Avg says what it averages") {
  test::TempDir dir("results_table");
  // The paper's 14 from a fixture, plus the Chinese and synthetic tasks, plus one LongBench does not know.
  json r = read_json(fixture("longbench_fox_pro.json"));
  for (const char* t : {"lsht", "multifieldqa_zh", "passage_count", "dureader", "vcsum", "passage_retrieval_en",
                        "passage_retrieval_zh", "my_task"})
    r["scores"][t] = 12.5;
  write(dir.path / "all.json", r);
  const std::vector<Table> tables = build_tables({read_result((dir.path / "all.json").string())});
  REQUIRE(tables.size() == 1);
  std::vector<std::string> keys;
  for (const Column& c : tables[0].columns) keys.push_back(c.key);
  CHECK(keys == std::vector<std::string>{"narrativeqa", "qasper", "multifieldqa_en", "multifieldqa_zh", "hotpotqa", "2wikimqa",
                                         "musique", "dureader", "gov_report", "qmsum", "multi_news", "vcsum", "trec",
                                         "triviaqa", "samsum", "lsht", "passage_count", "passage_retrieval_en",
                                         "passage_retrieval_zh", "lcc", "repobench-p", "my_task", "avg"});
  CHECK(tables[0].columns[3].label == "MFQA-zh");
  CHECK(tables[0].columns[21].label == "my_task");
  // Avg is still the paper's 14, as the title says: the fixture's value unchanged by the extra tasks.
  const std::vector<Table> paper = build_tables({read_result(fixture("longbench_fox_pro.json"))});
  CHECK(*tables[0].values[0].back() == *paper[0].values[0].back());
  CHECK(tables[0].title.find("Avg: the 14 English tasks") != std::string::npos);
  // LaTeX: one header group per run of one category, tasks outside LongBench under "Other".
  const std::string tex = render_latex(tables[0]);
  CHECK(tex.find("\\multicolumn{4}{c}{Single-Document QA}") != std::string::npos);
  CHECK(tex.find("\\multicolumn{3}{c}{Synthetic Tasks}") != std::string::npos);
  CHECK(tex.find("\\multicolumn{1}{c}{Other}") != std::string::npos);
  CHECK(tex.find("\\cmidrule(lr){23-23}") != std::string::npos);

  // LongBench-E: its 11 tasks (no narrativeqa/musique/qmsum columns unless present), Avg over them.
  json e = {{"scores", json::object()}};
  for (const char* t : {"qasper", "multifieldqa_en", "hotpotqa", "2wikimqa", "gov_report", "multi_news", "trec", "triviaqa",
                        "samsum", "lcc", "repobench-p"})
    e["scores"][t] = {{"0-4k", 10.0}, {"4-8k", 20.0}, {"8k+", 40.0}};
  e["scores"]["passage_count"] = {{"0-4k", 1.0}, {"4-8k", 2.0}, {"8k+", 3.0}};
  write(dir.path / "pred_e" / "m" / "result.json", e["scores"]);
  const std::vector<Table> et = build_tables({read_result((dir.path / "pred_e" / "m" / "result.json").string())});
  REQUIRE(et.size() == 3);
  CHECK(et[1].columns.size() == 13);  // 11 + passage_count + Avg
  CHECK(et[1].columns[9].key == "passage_count");
  CHECK(*et[1].values[0].back() == 20.0);  // the mean of the 11, passage_count left out
  CHECK(et[1].title.find("Avg: the paper's 11 LongBench-E tasks") != std::string::npos);
}

TEST_CASE("results table: a --limit result is marked and not ranked against full runs; full runs are unmarked") {
  test::TempDir dir("results_table");
  // The three full runs: no marker anywhere, in any format.
  for (Format f : {Format::Markdown, Format::Latex, Format::Csv}) {
    const std::string full = table_from_files(fixtures("lm_eval"), {}, f);
    CHECK(full.find("sup>") == std::string::npos);
    CHECK(full.find("$^{") == std::string::npos);
    CHECK(full.find("settings") == std::string::npos);
  }
  json limited = read_json(fixture("lm_eval_mamba2.json"));
  limited["header"]["settings"]["limit"] = 3;
  write(dir.path / "limited.json", limited);
  const std::vector<std::string> files = {fixture("lm_eval_fox_pro.json"), (dir.path / "limited.json").string(),
                                          fixture("lm_eval_transformer_pro.json")};
  const std::string md = table_from_files(files, {}, Format::Markdown);
  const std::vector<std::string> m = cells(row_of(md, "### lm-eval", "Mamba-2<sup>1</sup>"));
  const std::vector<std::string> fox = cells(row_of(md, "### lm-eval", "FoX (Pro)"));
  const std::vector<std::string> tf = cells(row_of(md, "### lm-eval", "Transformer (Pro)"));
  CHECK(md.find("- <sup>1</sup> Not the paper's settings: --limit 3 (paper: all documents)\n") != std::string::npos);
  // Mamba-2's PIQA (71.22) was the best; made on 3 documents it is ranked against nothing.
  CHECK(m[4] == "71.22");
  CHECK(fox[4] == "**70.67**");
  CHECK(tf[4] == "<u>70.35</u>");
  CHECK(m[13] == "55.19");  // its Avg neither
  CHECK(fox[13] == "**55.40**");
  CHECK(tf[13] == "<u>54.68</u>");

  const std::string tex = table_from_files(files, {}, Format::Latex);
  CHECK(tex.find("\nMamba-2$^{1}$ & 23.76 & ") != std::string::npos);
  CHECK(tex.find("\\par\\footnotesize $^{1}$ Not the paper's settings: --limit 3 (paper: all documents)\n\\end{center}") !=
        std::string::npos);
  const std::string csv = table_from_files(files, {}, Format::Csv);
  CHECK(csv.find(",avg,settings\n") != std::string::npos);
  CHECK(csv.find(",--limit 3 (paper: all documents)\n") != std::string::npos);
  CHECK(csv.find("\nFoX (Pro),") != std::string::npos);

  SUBCASE("rows made with one and the same other setting are ranked among themselves") {
    json fox_limited = read_json(fixture("lm_eval_fox_pro.json"));
    fox_limited["header"]["settings"]["limit"] = 3;
    write(dir.path / "fox_limited.json", fox_limited);
    const std::string both =
        table_from_files({(dir.path / "fox_limited.json").string(), (dir.path / "limited.json").string()}, {}, Format::Markdown);
    CHECK(cells(row_of(both, "### lm-eval", "Mamba-2<sup>1</sup>"))[4] == "**71.22**");
    CHECK(cells(row_of(both, "### lm-eval", "FoX (Pro)<sup>1</sup>"))[4] == "<u>70.67</u>");
  }
  SUBCASE("a full run in float32 (a CPU run: the exact numerics) is not marked") {
    json fox_fp32 = read_json(fixture("lm_eval_fox_pro.json"));
    fox_fp32["header"]["settings"]["dtype"] = "float32";
    write(dir.path / "fox_fp32.json", fox_fp32);
    const std::string t = table_from_files({(dir.path / "fox_fp32.json").string()}, {}, Format::Markdown);
    CHECK(t.find("<sup>") == std::string::npos);
    CHECK(t.find("Not the paper's settings") == std::string::npos);
  }
  SUBCASE("rows made with different other settings are not ranked at all") {
    json fox_other = read_json(fixture("lm_eval_fox_pro.json"));
    fox_other["header"]["settings"]["limit"] = 5;
    fox_other["header"]["settings"]["dtype"] = "float16";
    write(dir.path / "fox_other.json", fox_other);
    const std::string mixed =
        table_from_files({(dir.path / "fox_other.json").string(), (dir.path / "limited.json").string()}, {}, Format::Markdown);
    CHECK(mixed.find("**") == std::string::npos);
    CHECK(mixed.find("<u>") == std::string::npos);
    CHECK(mixed.find("- <sup>1</sup> Not the paper's settings: --dtype float16 (paper: bfloat16); --limit 5 (paper: all "
                     "documents)\n") != std::string::npos);
    CHECK(mixed.find("- <sup>2</sup> Not the paper's settings: --limit 3 (paper: all documents)\n") != std::string::npos);
  }
}

TEST_CASE("results table: a task subset is marked but ranked; a marker sits on the cell when a row mixes settings") {
  test::TempDir dir("results_table");
  json subset = read_json(fixture("longbench_mamba2.json"));
  subset["header"]["settings"]["tasks"] = {"qasper", "trec"};
  for (const char* t : {"narrativeqa", "multifieldqa_en", "hotpotqa", "2wikimqa", "musique", "gov_report", "qmsum", "multi_news",
                        "triviaqa", "samsum", "lcc", "repobench-p"})
    subset["scores"].erase(t);
  write(dir.path / "subset.json", subset);
  const std::string md = table_from_files({fixture("longbench_fox_pro.json"), (dir.path / "subset.json").string()}, {},
                                          Format::Markdown);
  CHECK(md.find("Not the paper's settings: tasks 2 of 14 (qasper, trec) (paper: the 14 English tasks)") != std::string::npos);
  const std::vector<std::string> m = cells(row_of(md, "### LongBench", "Mamba-2<sup>1</sup>"));
  CHECK(m[2] == "<u>11.26</u>");  // Qasper: below FoX's 12.88, and ranked against it
  CHECK(m[10] == "<u>31.0</u>");  // TREC

  // NIAH: FoX's standard run on the paper's grid, its easy run on two lengths only.
  json easy = read_json(fixture("niah_fox_pro_easy.json"));
  easy["header"]["settings"]["lengths"] = {1000, 4100};
  write(dir.path / "easy.json", easy);
  const std::string niah = table_from_files(
      {fixture("niah_fox_pro_standard.json"), (dir.path / "easy.json").string(), fixture("niah_transformer_pro_easy.json")}, {},
      Format::Markdown);
  CHECK(cells(row_of(niah, "### Needle", "FoX (Pro)")) == std::vector<std::string>{"FoX (Pro)", "**9.55**", "9.80<sup>1</sup>"});
  CHECK(cells(row_of(niah, "### Needle", "Transformer (Pro)"))[2] == "**5.81**");
  CHECK(niah.find("--lengths [1000,4100] (paper: 1000..32000 in 11 steps)") != std::string::npos);
}

TEST_CASE("results table: the report marks other settings, names every model, writes large numbers readably") {
  test::TempDir dir("results_table");
  json big = read_json(fixture("lm_eval_mamba2.json"));
  big["results"]["wikitext"]["word_perplexity,none"] = 123456.789;
  big["header"]["settings"]["limit"] = 3;
  write(dir.path / "big.json", big);
  const std::vector<ResultFile> rs = read_results({fixture("lm_eval_fox_pro.json"), (dir.path / "big.json").string()}, {"A", "B"});
  const std::string html = report::render_report(rs, {});
  CHECK(html.find("<td>B<sup class=\"mark\">1</sup></td>") != std::string::npos);
  CHECK(html.find("<td>123,456.79</td>") != std::string::npos);
  CHECK(html.find("thousands separators") != std::string::npos);
  CHECK(html.find("Not the paper's settings: --limit 3 (paper: all documents)") != std::string::npos);
  // Every card names its model, even when --label renamed the row.
  CHECK(html.find("<span class=\"model\">/models/fox-pro-760m-longcrawl64-48b</span>") != std::string::npos);
  CHECK(html.find("<span class=\"model\">/models/mamba2-760m-longcrawl64-48b</span>") != std::string::npos);
  // The Markdown table keeps the plain number.
  const std::string md = table_from_files({(dir.path / "big.json").string()}, {}, Format::Markdown);
  CHECK(md.find("123456.79") != std::string::npos);
  CHECK(md.find("123,456") == std::string::npos);
  CHECK(readable_value({"x", "x", "x", "", "", false, 2}, 9999.5) == "9999.50");
  CHECK(readable_value({"x", "x", "x", "", "", false, 2}, -1234567.0) == "-1,234,567.00");
  CHECK(readable_value({"x", "x", "x", "", "", false, -1}, 12345.5) == "12,345.5");
  CHECK(readable_value({"x", "x", "x", "", "", false, 2}, 1.5e17) == "1.5e+17");
}

namespace {

// A NIAH result of the fixtures with per_item over `scores` (its mean set to theirs) and a haystack digest.
json niah_with_items(const std::string& file, const std::vector<double>& scores, const std::string& digest) {
  json r = read_json(fixture(file));
  ItemScores s;
  for (size_t i = 0; i < scores.size(); ++i) s.ids.push_back(std::to_string(i));
  s.values = scores;
  r["per_item"] = {{"mean", per_item_entry(s)}};
  r["mean"] = aggregate_items("mean", scores, {});
  r["header"]["settings"]["haystack_digest"] = digest;
  return r;
}

}  // namespace

TEST_CASE("results table: n always, ± on request, and no ranking across item counts or data") {
  test::TempDir dir("results_table");
  const std::string a = (dir.path / "a.json").string(), b = (dir.path / "b.json").string(),
                    c = (dir.path / "c.json").string();
  write_json_atomic(a, niah_with_items("niah_fox_pro_standard.json", {10, 10, 1, 1}, "sha256:aaaa"));
  write_json_atomic(b, niah_with_items("niah_mamba2_standard.json", {1, 1, 1, 2}, "sha256:aaaa"));
  // Same items and data: ranked; the n row gives the shared n; --stderr adds each cell's stderr.
  std::string md = table_from_files({a, b}, {}, Format::Markdown, true);
  CHECK(md.find("| *n* | 4 |") != std::string::npos);
  CHECK(md.find("**5.50** ± 2.60") != std::string::npos);  // mean 5.5, stderr sqrt(27 / 4) = 2.598
  CHECK(md.find("not ranked") == std::string::npos);
  CHECK(table_from_files({a, b}, {}, Format::Markdown).find("±") == std::string::npos);  // only on request
  const std::string csv = table_from_files({a, b}, {}, Format::Csv);
  CHECK(csv.find("standard:n,standard:stderr") != std::string::npos);
  // Another item count: each cell names its n, nothing is bold, a caveat says why.
  write_json_atomic(c, niah_with_items("niah_mamba2_standard.json", {1, 1, 1, 2, 3, 3}, "sha256:aaaa"));
  md = table_from_files({a, c}, {}, Format::Markdown);
  CHECK(md.find("| *n* | varies |") != std::string::npos);
  CHECK(md.find("5.50 (n=4)") != std::string::npos);
  CHECK(md.find("1.83 (n=6)") != std::string::npos);
  CHECK(md.find("**") == std::string::npos);
  CHECK(md.find("standard is not ranked: its cells were made on different numbers of items") != std::string::npos);
  // Other data (another haystack): not ranked either, the digests named.
  write_json_atomic(c, niah_with_items("niah_mamba2_standard.json", {1, 1, 1, 2}, "sha256:bbbbbbbbbbbbbbbbbbbb"));
  md = table_from_files({a, c}, {}, Format::Markdown);
  CHECK(md.find("**") == std::string::npos);
  CHECK(md.find("standard is not ranked: its cells were made on different data") != std::string::npos);
  CHECK(md.find("sha256:bbbbbbbbbbbb") != std::string::npos);
  const std::string tex = table_from_files({a, c}, {}, Format::Latex);
  CHECK(tex.find("$n$ & 4") != std::string::npos);
}
