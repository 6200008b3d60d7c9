// `foxeval table`: the paper's tables from result files of any task, one row per model.
//
//   LongBench   the 14 English tasks in table_longbench.py's order and labels, plus their average
//               (LongBench-E results: one table per length bucket)
//   lm-eval     table_lm_eval.py's columns: wikitext and lambada perplexity, then accuracies
//               (acc_norm where the paper uses it, x100), and Avg over its AVG_LIST
//   loss        val/loss_avg_len_L at each length L (lower is better)
//   NIAH        the mean score of each mode (and of the judge, where a result has one)
//
// Per column the best value is bold and the second underlined, compared as the official scripts
// do (distinct exact values; lower is better for perplexity and loss). A cell a result does not
// give is missing ("–" in Markdown and HTML, "--" in LaTeX, empty in CSV), never a zero; an
// average over a missing task is missing too. The column definitions come from
// tasks/results_table.json (the official scripts' lists, with their source).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace foxeval::results {

// One result file, as the tables read it.
struct ResultFile {
  std::string path;
  std::string kind;   // "loss", "niah", "longbench" or "lm-eval"
  std::string label;  // the row it fills
  bool label_given = false;  // from --label
  std::string model;  // the model directory the result names ("" when it names none)
  nlohmann::json json;
};

// Reads a result and says what it is: foxeval results by header.task (or "kind": "foxeval-loss"),
// and, without a header, eval.py's LongBench result.json and lm-eval's results.json. A shard
// part, or a file of no known kind, is an error naming the file.
ResultFile read_result(const std::string& path, const std::string& label = "");

// A row's name: the paper's label of the model folder (or Hugging Face repo) name when it is one
// of the published checkpoints, else that name; without a model, the model family, then the
// model_type; else the file's folder for official file names (result.json), else the file name.
std::string model_label(const nlohmann::json& result, const std::string& path);

struct Column {
  std::string key;            // stable id: "narrativeqa", "piqa/acc", "loss_len_512", "avg"
  std::string label;          // header text: "NarrativeQA", "PIQA"
  std::string latex_label;    // LaTeX header text
  std::string metric;         // second header line ("acc↑"); may be empty
  std::string latex_metric;   // "acc$\uparrow$"
  bool lower_is_better = false;
  int decimals = 2;           // digits after the point; -1: Python's repr (LongBench's rounded scores)
};

struct Table {
  std::string id;     // "longbench", "longbench-e 0-4k", "lm-eval", "loss", "niah"
  std::string title;  // a heading for Markdown and HTML
  std::vector<Column> columns;
  std::vector<std::string> rows;                            // labels, in the order first given
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
  std::vector<std::vector<int>> rank;                       // 1 best, 2 second, 0 neither
};

// The tables of a set of results, in the order LongBench, LongBench-E, lm-eval, loss, NIAH (only
// kinds present). Two results giving the same cell of a row, or one label naming two different
// models, are errors naming both files (tell them apart with --label).
std::vector<Table> build_tables(const std::vector<ResultFile>& results);

// Best and second-best ranks of every column (build_tables calls it).
void rank_columns(Table& table);

// A value as the table prints it (no marks): "20.17", "9.8" (repr), "71.49".
std::string format_value(const Column& column, double value);

enum class Format { Markdown, Latex, Csv };
Format parse_format(const std::string& name);  // errors name --format

std::string render_markdown(const Table& table);
std::string render_latex(const Table& table);
std::string render_csv(const Table& table);
// Every table, separated by a blank line.
std::string render_tables(const std::vector<Table>& tables, Format format);

// `foxeval table`: labels (one per file, or none) name the rows.
std::string table_from_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                             Format format);
std::vector<ResultFile> read_results(const std::vector<std::string>& files, const std::vector<std::string>& labels);

// tasks/results_table.json: $FOXEVAL_TASKS_DIR/results_table.json, else the source tree's tasks/
// (compile time), else tasks/ beside the binary's folder. Loaded once.
const nlohmann::json& table_definitions();

}  // namespace foxeval::results
