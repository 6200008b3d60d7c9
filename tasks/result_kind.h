// The registry of result kinds: how a task's results become tables, report sections and ranks.
//
// A task owns its tables: next to its result builder (tasks/<task>/<task>_table.cpp) it writes
// a function returning a ResultKind, and names it in its definition (TaskDef::tables,
// tasks/task_def.h), whose registration adds the kind here. Tests call register_kind() directly.
//
// A kind fills in:
//   task        the header.task its results carry; names the kind in errors
//   order       its tables' place among the kinds' (lower first)
//   add         one result's cells: filler.table(id, make) gives a table, made on first use;
//               filler.row/column/set fill it (a second value for one cell is an error)
// and optionally:
//   recognises  a result without header.task (an official or older file) is this kind's
//   finish      after every result was added: column order, averages, table order (the tables
//               come sorted by id)
//   settings    the settings that change its numbers, with the paper's values: a differing one
//               marks the result's cells; the comparable ones must be equal for two cells to be
//               ranked against each other (none: every result comparable, none marked).
//               paper_settings() reads them from the task's data
//   latex       its tables' LaTeX layout (default: latex_generic)
//   report      its sections of `foxeval report` (figures after the tables)
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tasks/results/results_table.h"

namespace foxeval::report {
struct ReportOptions;
}

namespace foxeval::results {

// Fills a kind's tables, remembering which file gave each cell (a second one is an error) and
// where it came from (its ranking group and footnote).
class TableFiller {
 public:
  Table& table(const std::string& id, const std::function<Table()>& make);
  // The table `id` with only a title to set up (made on first use).
  Table& table(const std::string& id, const std::string& title);
  size_t row(Table& t, const std::string& label);
  size_t column(Table& t, const Column& c);  // found by key, else appended
  // `metric`: the value's path in the result (as `foxeval check` names it, e.g. "results/piqa/acc,none"):
  // the cell takes its n and stderr (times `scale`, the table's units over the result's) from the
  // result's per_item, its data identity, and the column its direction (tasks/results/metric_direction.h).
  void set(Table& t, size_t row, size_t column, double value, const ResultFile& from, const std::string& metric = "",
           double scale = 1);
  // The kind's tables, sorted by id.
  std::vector<Table> take();

 private:
  std::map<std::string, Table> tables_;
  std::map<std::string, std::map<std::pair<size_t, size_t>, std::string>> from_;  // table -> cell -> file
};

// One section of the report page: <section id="ID"><h2>TITLE</h2>HTML</section>, in `order`.
struct ReportSection {
  std::string id, title, html;
  int order = 0;
};

// What a kind's report sections are drawn from: its results and its tables.
struct ReportInput {
  std::vector<const ResultFile*> results;
  std::vector<const Table*> tables;
  const report::ReportOptions* options = nullptr;
};

// The fields in the order of the comment above, so that a kind can be one brace list.
struct ResultKind {
  std::string task;
  int order = 0;
  std::function<void(TableFiller&, const ResultFile&)> add;
  std::function<bool(const nlohmann::json&)> recognises;
  std::function<void(std::vector<Table>&)> finish;
  std::function<std::vector<Setting>(const ResultFile&)> settings;
  std::function<std::string(const Table&)> latex;
  std::function<std::vector<ReportSection>(const ReportInput&)> report;
};

// Adds a kind (one of the same task is replaced, so registering twice is harmless).
void register_kind(ResultKind kind);
// The registered kinds in their order (then by task name).
std::vector<const ResultKind*> kinds();
const ResultKind* find_kind(const std::string& task);  // nullptr: none
// "longbench, lm-eval, ...": the registered tasks, for help texts and errors.
std::string registered_tasks();

// The settings of `spec` (a task's "paper_settings": {"limit": {"flag": "--limit", "paper": -1,
// "shown": "all"}, ...}; "comparable": false for one that marks but does not split the ranking)
// read from the result's settings; a setting the result does not record counts as the paper's.
std::vector<Setting> paper_settings(const ResultFile& r, const nlohmann::json& spec);

// The "tasks" setting of a result over a task list (its settings' "tasks"): which of the paper's
// `paper` tasks it covers. Fewer marks it; not comparable (each task's numbers are the full ones),
// so it is still ranked. No "tasks" recorded: the paper's.
Setting task_subset(const ResultFile& r, const std::vector<std::string>& paper, const std::string& paper_text);

}  // namespace foxeval::results
