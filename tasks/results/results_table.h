// `foxeval table`: the paper's tables from result files of any task, one row per model.
//
// This file knows no task: each task registers a ResultKind (tasks/result_kind.h) that says how
// to recognise its results, which tables and columns they fill, its LaTeX layout, its report
// sections and which settings must be equal for two rows to be ranked against each other.
//
// Per column the best value is bold and the second underlined, compared as the official scripts
// do (distinct exact values; lower is better where the column says so), but only among cells made
// with comparable settings: the paper's where the column has any, else the one setting all its
// cells share; a column mixing other settings ranks nothing. A cell made with settings other than
// the paper's (a --limit, a task subset, another length or dtype) carries a numbered marker and
// its table a footnote naming the setting, its value and the paper's. A cell a result does not
// give is missing ("–" in Markdown and HTML, "--" in LaTeX, empty in CSV), never a zero; an
// average over a missing column is missing too.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace foxeval::results {

// One setting of a result that changes its numbers, against the paper's protocol.
struct Setting {
  std::string name;        // as the user wrote it: "--limit", "--max-length", "--dtype", "tasks"
  std::string value;       // this result's, as text
  std::string paper;       // the paper's, as text
  bool differs = false;    // the value is not the paper's: the result's cells are marked
  bool comparable = true;  // two results are ranked against each other only when these are equal
};

// One result file, as the tables read it.
struct ResultFile {
  std::string path;
  std::string kind;   // the registered kind's task name (header.task)
  std::string label;  // the row it fills
  bool label_given = false;  // from --label
  std::string model;  // the model directory the result names ("" when it names none)
  nlohmann::json json;
  std::vector<Setting> settings;  // from its kind (empty: nothing to compare)
};

// Reads a result and says what it is: foxeval results by header.task, else the first registered
// kind that recognises it (official files without a header). A shard part, or a file no kind
// takes, is an error naming the file.
ResultFile read_result(const std::string& path, const std::string& label = "");

// A row's name: the paper's label of the model folder (or Hugging Face repo) name when it is one
// of the published checkpoints, else that name; without a model, the model family, then the
// model_type; else the file's folder for official file names (result.json), else the file name.
std::string model_label(const nlohmann::json& result, const std::string& path);

// The settings object of a result: header.settings, else its "identity" (nullptr: none).
const nlohmann::json* settings_of(const nlohmann::json& result);

// The text of the settings of `r` that must be equal for two results to be ranked against each
// other ("" when its kind compares nothing); `paper` is set when every one is the paper's.
std::string comparable_key(const ResultFile& r, bool* paper = nullptr);
// The footnote of a result made with other settings than the paper's ("" when it has none):
// "--limit 3 (paper: all); --dtype float32 (paper: bfloat16)".
std::string deviation_note(const ResultFile& r);

struct Column {
  std::string key;            // stable id: "narrativeqa", "piqa/acc", "len_512", "avg"
  std::string label;          // header text: "NarrativeQA", "PIQA"
  std::string latex_label;    // LaTeX header text
  std::string metric;         // second header line ("acc↑"); may be empty
  std::string latex_metric;   // "acc$\uparrow$"
  bool lower_is_better = false;
  int decimals = 2;           // digits after the point; -1: Python's repr (rounded scores)
  bool summary = false;       // an average of other columns: charts set it apart
};

// Where a cell came from: its ranking group and its footnote.
struct CellOrigin {
  std::string key;     // comparable_key of the result that gave it ("\x01mixed" for an average over several)
  bool paper = true;   // made with the paper's settings
  int note = 0;        // 1-based index into Table::notes, 0: none
  // Over how many items (documents, records, cells) and with which standard error, in the cell's
  // units, from the result's per_item (tasks/results/item_stats.h); n -1: the result keeps none.
  int64_t n = -1;
  std::optional<double> stderr_;
  std::string data;    // the data's identity (a content digest), "" when the result names none
};

struct Table {
  std::string id;     // named by its kind, unique among all tables ("table-" + id in the report)
  std::string kind;   // the kind that made it (its LaTeX layout)
  std::string title;  // a heading for Markdown and HTML
  std::vector<Column> columns;
  std::vector<std::string> rows;                            // labels, in the order first given
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
  std::vector<std::vector<CellOrigin>> origin;              // [row][column]
  std::vector<std::vector<int>> rank;                       // 1 best, 2 second, 0 neither
  std::vector<std::string> notes;                           // footnotes: settings other than the paper's
  // Unnumbered footnotes: columns left unranked because their cells were made on different data
  // or over different item counts (rank_columns).
  std::vector<std::string> caveats;
  bool show_stderr = false;  // render "value ± stderr" where a cell has one (`table --stderr`)
};

// The tables of a set of results, kind by kind in their registered order. Two results giving the
// same cell of a row, or one label naming two different models, get rows of their own: the later
// one's label takes a suffix (" (2)", " (3)", ...), so no result is dropped or merged into another.
std::vector<Table> build_tables(const std::vector<ResultFile>& results);

// Best and second-best ranks of every column among comparable cells (build_tables calls it). A
// column whose comparable cells were made on different data or over different item counts ranks
// nothing and says why in Table::caveats.
void rank_columns(Table& table);

// A value as the table prints it (no marks): "20.17", "9.8" (repr), "71.49".
std::string format_value(const Column& column, double value);
// As format_value, with thousands separators from 10,000 on ("12,345.67") and, from 10^15, in
// scientific notation ("1.23e+17"): for pages read by people (the report).
std::string readable_value(const Column& column, double value);

// What follows a cell's value: "PM stderr" when the table shows stderrs and the cell has one, and
// " (n=K)" when its column's cells differ in n ("" for a missing cell).
std::string cell_suffix(const Table& t, size_t row, size_t column, const char* pm);
// A column's n for the "n" row under a table: the n its cells share, "varies" (given per cell), or
// "" when no cell knows its n.
std::string n_text(const Table& t, size_t column);
bool has_item_counts(const Table& t);  // some cell knows its n: the table gets an "n" row
bool has_values(const Table& t);       // some cell has a value (an empty table is left out)

// The footnote of a cell, where it shows: on the row's label when every cell of the row shares
// it, else on the cell (0: no marker there). `column` -1 asks for the label's.
int note_shown(const Table& t, size_t row, int column);

enum class Format { Markdown, Latex, Csv };
Format parse_format(const std::string& name);  // errors name --format

std::string render_markdown(const Table& table);
std::string render_latex(const Table& table);  // the kind's layout, else latex_generic
std::string render_csv(const Table& table);
// Every table, separated by a blank line.
std::string render_tables(const std::vector<Table>& tables, Format format);

// `foxeval table`: labels (one per file, or none; or FILE=LABEL for some files) name the rows;
// show_stderr adds "± stderr" to the cells that have one.
std::string table_from_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                             Format format, bool show_stderr = false);
std::vector<ResultFile> read_results(const std::vector<std::string>& files, const std::vector<std::string>& labels);

// Pieces for the kinds' own layouts.
std::string latex_escape(const std::string& s);
std::string plain_metric(std::string latex);  // "acc$\uparrow$" -> "acc↑"
std::string latex_rows(const Table& t);       // "Label & \textbf{1.00} & ... \\" per row, markers included
std::string latex_notes(const Table& t);      // the footnotes below a tabular ("" when none)
std::string latex_generic(const Table& t);    // the official scripts' booktabs table
// Reorders columns (and their cells) by `less` on the columns, stably.
void sort_columns(Table& t, const std::function<bool(const Column&, const Column&)>& less);
// Column `avg_column` of each row: np.mean of the columns `keys` in column order, set only when
// every one of them is present.
void fill_average(Table& t, size_t avg_column, const std::vector<std::string>& keys);

// A task's definition data: $FOXEVAL_TASKS_DIR/RELATIVE, else the source tree's tasks/ (compile
// time), else tasks/ beside the binary's folder. Loaded once per file; errors say where it looked.
const nlohmann::json& task_data(const std::string& relative);
// tasks/results/results_table.json: what no single task owns (the paper's row names).
const nlohmann::json& table_definitions();

}  // namespace foxeval::results
