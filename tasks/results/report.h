// `foxeval report`: one self-contained HTML page over result files of any task: the tables of
// `foxeval table`, each task's figures (its report sections, registered with its ResultKind,
// tasks/result_kind.h), and every result's header. No network: CSS and SVG are inline, there is
// no script, no font or image to fetch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/results/results_table.h"

namespace foxeval::report {

struct ReportOptions {
  std::string title = "foxeval report";
  int64_t train_length = 0;  // the training context length, marked in figures over lengths (0: none)
  bool show_stderr = false;  // cells as "value ± stderr" where the result keeps one
};

// The page. Each table sits in a `div.table-box` (id table-<table id>), each figure in a
// `figure.figure-box`; the kinds' sections follow the tables, the results' cards come last.
std::string render_report(const std::vector<results::ResultFile>& results, const ReportOptions& options);

// Reads the files (labels: one per file, or none), renders, writes `out` atomically.
void write_report(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                  const std::string& out, const ReportOptions& options);

// Pieces for the kinds' sections.
// <figure class="figure-box" id=ID>SVG<figcaption>CAPTION</figcaption></figure>; the SVG gets a
// viewBox so that it scales down to its box. `extra_class` "natural": the box keeps the figure's
// own size (it shrinks only when the page is narrower) instead of stretching over the row.
std::string figure_html(const std::string& id, const std::string& svg, const std::string& caption_html,
                        const std::string& extra_class = "");
// An id made of a name: lower-case letters and digits, others '-'.
std::string slug(const std::string& s);

}  // namespace foxeval::report
