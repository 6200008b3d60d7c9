#include "tasks/results/report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/plot.h"
#include "tasks/result_kind.h"

using nlohmann::json;

namespace foxeval::report {
namespace {

// Every box keeps to the page's width: tables shrink their font and wrap headers, figures scale
// down (their SVGs carry a viewBox), long settings wrap anywhere.
const char* const kStyle = R"(
*{box-sizing:border-box}
body{margin:0 auto;max-width:1240px;padding:16px 20px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d1d1f;background:#fff}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:20px;margin:32px 0 10px;padding-bottom:4px;border-bottom:2px solid #e4e4e7}
h3{font-size:15px;margin:18px 0 6px}
p.meta{color:#555;margin:2px 0 10px}
nav a{margin-right:14px;color:#0b57d0;text-decoration:none}
.table-box{overflow-x:auto;margin:8px 0 18px}
table.results{border-collapse:collapse;font-size:12.5px;font-variant-numeric:tabular-nums}
table.results th,table.results td{padding:4px 5px;border-bottom:1px solid #e4e4e7;text-align:right}
table.results th{font-weight:600;vertical-align:bottom;background:#f6f6f8;overflow-wrap:anywhere}
table.results th:first-child,table.results td:first-child{text-align:left;white-space:nowrap}
table.results td.missing{color:#999}
table.results .metric{display:block;font-weight:400;color:#555}
figure.figure-box{margin:10px 0 22px;overflow-x:auto}
figure.figure-box svg{display:block;max-width:100%;height:auto}
figcaption{color:#555;font-size:13px;margin-top:4px}
.grid{display:flex;flex-wrap:wrap;gap:18px}
.grid figure.figure-box{flex:1 1 560px;max-width:100%;margin:0}
.headers{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:12px}
.header-box{border:1px solid #e4e4e7;border-radius:6px;padding:8px 12px;overflow-x:auto;min-width:0}
table.kv{border-collapse:collapse;font-size:13px}
table.kv th{text-align:left;color:#555;font-weight:500;padding:2px 14px 2px 0;vertical-align:top;white-space:nowrap}
table.kv td{padding:2px 0;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;background:#f6f6f8;padding:8px;border-radius:4px;margin:6px 0}
.note{color:#8a4b00}
sup.mark{color:#8a4b00;font-weight:600;margin-left:1px}
.table-notes{margin:4px 0 0;padding:0;list-style:none;color:#8a4b00;font-size:12.5px}
.grid figure.figure-box.natural{flex:0 1 auto}
.header-box h3 .model{display:block;font-weight:400;color:#555;font-size:13px;overflow-wrap:anywhere}
)";

// An SVG sized by width/height attributes only cannot scale; give it the viewBox that lets CSS
// shrink it to its box.
std::string scalable_svg(std::string svg) {
  const size_t open = svg.find("<svg");
  const size_t close = svg.find('>', open);
  if (open == std::string::npos || close == std::string::npos) throw Error("internal: not an SVG");
  const std::string tag = svg.substr(open, close - open);
  if (tag.find("viewBox") != std::string::npos) return svg;
  auto attr = [&](const char* name) {
    const std::string key = std::string(" ") + name + "=\"";
    const size_t at = tag.find(key);
    if (at == std::string::npos) throw Error(fmt::format("internal: an SVG without {}", name));
    return tag.substr(at + key.size(), tag.find('"', at + key.size()) - at - key.size());
  };
  svg.insert(close, fmt::format(" viewBox=\"0 0 {} {}\"", attr("width"), attr("height")));
  return svg;
}

std::string mark(int note) { return note > 0 ? fmt::format("<sup class=\"mark\">{}</sup>", note) : std::string(); }

std::string html_table(const results::Table& t) {
  std::string out = fmt::format("<div class=\"table-box\" id=\"table-{}\">\n<h3>{}</h3>\n<table class=\"results\">\n<thead><tr><th>Model</th>",
                                slug(t.id), xml_escape(t.title));
  for (const results::Column& c : t.columns) {
    out += "<th>" + xml_escape(c.label);
    if (!c.metric.empty()) out += "<span class=\"metric\">" + xml_escape(c.metric) + "</span>";
    out += "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += "<tr><td>" + xml_escape(t.rows[r]) + mark(results::note_shown(t, r, -1)) + "</td>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const std::optional<double>& v = t.values[r][c];
      if (!v) {
        out += "<td class=\"missing\" title=\"not in the results\">\xE2\x80\x93</td>";
        continue;
      }
      const std::string s = results::readable_value(t.columns[c], *v);
      const std::string m = xml_escape(results::cell_suffix(t, r, c, " \xC2\xB1 ")) +
                            mark(results::note_shown(t, r, static_cast<int>(c)));
      out += t.rank[r][c] == 1 ? "<td><strong>" + s + "</strong>" + m + "</td>"
             : t.rank[r][c] == 2 ? "<td><u>" + s + "</u>" + m + "</td>"
                                 : "<td>" + s + m + "</td>";
    }
    out += "</tr>\n";
  }
  if (results::has_item_counts(t)) {  // over how many items each column's numbers are
    out += "<tr class=\"item-counts\"><td><em>n</em></td>";
    for (size_t c = 0; c < t.columns.size(); ++c) out += "<td>" + xml_escape(results::n_text(t, c)) + "</td>";
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (!t.caveats.empty()) {
    out += "<ul class=\"table-notes\">\n";
    for (const std::string& c : t.caveats) out += "<li>" + xml_escape(c) + "</li>\n";
    out += "</ul>\n";
  }
  if (!t.notes.empty()) {
    out += "<ul class=\"table-notes\">\n";
    for (size_t i = 0; i < t.notes.size(); ++i)
      out += fmt::format("<li><sup>{}</sup> Not the paper's settings: {}; ranked only against rows made with the same "
                         "settings.</li>\n",
                         i + 1, xml_escape(t.notes[i]));
    out += "</ul>\n";
  }
  return out + "</div>\n";
}

bool has_large_values(const std::vector<results::Table>& tables) {
  for (const results::Table& t : tables)
    for (const auto& row : t.values)
      for (const auto& v : row)
        if (v && std::fabs(*v) >= 1e4) return true;
  return false;
}

std::string kv_row(const std::string& key, const std::string& value) {
  return "<tr><th>" + xml_escape(key) + "</th><td>" + xml_escape(value) + "</td></tr>\n";
}

std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string header_section(const std::vector<results::ResultFile>& rs) {
  std::string out = "<section id=\"headers\">\n<h2>Results</h2>\n<div class=\"headers\">\n";
  for (size_t i = 0; i < rs.size(); ++i) {
    const results::ResultFile& r = rs[i];
    const std::string model = r.model.empty() ? "model not recorded in the file" : r.model;
    out += fmt::format("<div class=\"header-box\" id=\"result-{}\">\n<h3>{} &middot; {}<span class=\"model\">{}</span></h3>\n"
                       "<table class=\"kv\">\n",
                       i, xml_escape(r.label), xml_escape(r.kind), xml_escape(model));
    out += kv_row("file", r.path);
    const std::string note = results::deviation_note(r);
    if (!note.empty()) out += "<tr><th>not the paper's</th><td class=\"note\">" + xml_escape(note) + "</td></tr>\n";
    const json* settings = results::settings_of(r.json);
    if (r.json.contains("header") && r.json["header"].is_object()) {
      const json& h = r.json["header"];
      for (const char* k : {"task", "foxeval_version", "date", "elapsed_s"})
        if (h.contains(k)) out += kv_row(k, scalar_text(h[k]));
      if (h.contains("machine") && h["machine"].is_object())
        for (auto it = h["machine"].begin(); it != h["machine"].end(); ++it) out += kv_row("machine." + it.key(), scalar_text(it.value()));
    }
    if (settings)
      for (const char* k : {"model_type", "num_parameters", "dtype", "device_type"})
        if (settings->contains(k)) out += kv_row(k, scalar_text((*settings)[k]));
    out += "</table>\n";
    if (!r.json.contains("header"))
      out += "<p class=\"note\">No header: the file was not written by a foxeval task run (or predates result headers).</p>\n";
    if (settings)
      out += "<details><summary>every setting</summary>\n<pre>" + xml_escape(settings->dump(2)) + "</pre>\n</details>\n";
    out += "</div>\n";
  }
  return out + "</div>\n</section>\n";
}

// Every kind's sections, in their order.
std::vector<results::ReportSection> kind_sections(const std::vector<results::ResultFile>& rs,
                                                  const std::vector<results::Table>& tables, const ReportOptions& options) {
  std::vector<results::ReportSection> out;
  for (const results::ResultKind* k : results::kinds()) {
    if (!k->report) continue;
    results::ReportInput in;
    in.options = &options;
    for (const results::ResultFile& r : rs)
      if (r.kind == k->task) in.results.push_back(&r);
    for (const results::Table& t : tables)
      if (t.kind == k->task) in.tables.push_back(&t);
    if (in.results.empty()) continue;
    for (results::ReportSection& s : k->report(in)) out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  return out;
}

}  // namespace

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  return out;
}

std::string figure_html(const std::string& id, const std::string& svg, const std::string& caption, const std::string& extra_class) {
  return fmt::format("<figure class=\"figure-box{}\" id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n",
                     extra_class.empty() ? "" : " " + extra_class, id, scalable_svg(svg), caption);
}

std::string render_report(const std::vector<results::ResultFile>& rs, const ReportOptions& options) {
  if (rs.empty()) throw Error("report: no result files given");
  std::vector<results::Table> tables;  // a table without a value is left out
  for (results::Table& t : results::build_tables(rs))
    if (results::has_values(t)) {
      t.show_stderr = options.show_stderr;
      tables.push_back(std::move(t));
    }
  const std::vector<results::ReportSection> sections = kind_sections(rs, tables, options);
  std::string nav = "<a href=\"#tables\">Tables</a>";
  for (const results::ReportSection& s : sections) nav += "<a href=\"#" + s.id + "\">" + xml_escape(s.title) + "</a>";
  nav += "<a href=\"#headers\">Results</a>";

  std::set<std::string> models;
  for (const results::ResultFile& r : rs) models.insert(r.label);
  bool any_note = false;
  for (const results::Table& t : tables) any_note = any_note || !t.notes.empty();

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + xml_escape(options.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<header>\n<h1>" + xml_escape(options.title) + "</h1>\n";
  out += fmt::format("<p class=\"meta\">{} result files, {} models. Bold: best in its column; underlined: second best "
                     "(lower is better where the column says &darr; or the title says so); &ndash;: not in the results.",
                     rs.size(), models.size());
  if (any_note)
    out += " <sup class=\"mark\">1</sup>: made with other settings than the paper's (the note below the table names "
           "them); such rows are ranked only against rows made with the same settings.";
  if (has_large_values(tables))
    out += " Values of 10,000 and above are written with thousands separators (12,345.67), from 10<sup>15</sup> in "
           "scientific notation (1.2e+15).";
  out += "</p>\n";
  out += "<nav>" + nav + "</nav>\n</header>\n";
  out += "<section id=\"tables\">\n<h2>Tables</h2>\n";
  for (const results::Table& t : tables) out += html_table(t);
  out += "</section>\n";
  for (const results::ReportSection& s : sections)
    out += "<section id=\"" + s.id + "\">\n<h2>" + xml_escape(s.title) + "</h2>\n" + s.html + "</section>\n";
  out += header_section(rs);
  return out + "</body>\n</html>\n";
}

void write_report(const std::vector<std::string>& files, const std::vector<std::string>& labels, const std::string& out,
                  const ReportOptions& options) {
  write_text_atomic(out, render_report(results::read_results(files, labels), options));
}

}  // namespace foxeval::report
