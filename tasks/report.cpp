#include "tasks/report.h"

#include "data/json_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "data/errors.h"
#include "tasks/niah/heatmap.h"
#include "tasks/niah/niah_task.h"
#include "tasks/plot.h"

using nlohmann::json;

namespace foxeval::report {
namespace {

// matplotlib's tab10, as tasks/plot.cpp colours its curves.
const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

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
)";

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  return out;
}

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
    out += "<tr><td>" + xml_escape(t.rows[r]) + "</td>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const std::optional<double>& v = t.values[r][c];
      if (!v) {
        out += "<td class=\"missing\" title=\"not in the results\">\xE2\x80\x93</td>";
        continue;
      }
      const std::string s = results::format_value(t.columns[c], *v);
      out += t.rank[r][c] == 1 ? "<td><strong>" + s + "</strong></td>"
             : t.rank[r][c] == 2 ? "<td><u>" + s + "</u></td>"
                                 : "<td>" + s + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n";
}

std::string figure(const std::string& id, const std::string& svg, const std::string& caption) {
  return fmt::format("<figure class=\"figure-box\" id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", id,
                     scalable_svg(svg), caption);
}

std::string loss_section(const std::vector<results::ResultFile>& rs) {
  std::vector<PlotSeries> series;
  std::string notes;
  for (const results::ResultFile& r : rs) {
    if (r.kind != "loss") continue;
    const json& v = r.json.contains("val/loss_per_token") ? r.json["val/loss_per_token"] : json();
    if (!v.is_array() || v.empty()) {
      notes += "<p class=\"note\">" + xml_escape(r.path) + ": no val/loss_per_token, not drawn.</p>\n";
      continue;
    }
    PlotSeries s{r.label, {}};
    for (const json& x : v) s.loss.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    series.push_back(std::move(s));
  }
  if (series.empty() && notes.empty()) return "";
  std::string out = "<section id=\"loss\">\n<h2>Loss per position</h2>\n" + notes;
  if (!series.empty()) {
    PlotOptions opts;
    opts.width = 900;
    opts.height = 520;
    out += figure("figure-loss", loss_plot_svg(series, opts),
                  "Per-token held-out loss against token position (log scale), averaged in log-spaced bins.");
  }
  return out + "</section>\n";
}

std::string niah_section(const std::vector<results::ResultFile>& rs, int64_t train_length) {
  std::string figures;
  int n = 0;
  for (const results::ResultFile& r : rs) {
    if (r.kind != "niah") continue;
    const niah::HeatmapPanel panel = niah::read_heatmap_panel(r.path, r.label, /*judge=*/false);
    figures += figure(fmt::format("figure-niah-{}", n++), niah::heatmap_svg({panel}, train_length),
                      xml_escape(panel.title) + ": score (1-10) of each context length and needle depth.");
  }
  if (figures.empty()) return "";
  return "<section id=\"niah\">\n<h2>Needle in a haystack</h2>\n<div class=\"grid\">\n" + figures + "</div>\n</section>\n";
}

std::string longbench_section(const std::vector<results::Table>& tables) {
  std::string out;
  for (const results::Table& t : tables) {
    if (t.id.rfind("longbench", 0) != 0) continue;
    out += figure("figure-" + slug(t.id), longbench_bars_svg(t), xml_escape(t.title) + ": score per task and model.");
  }
  if (out.empty()) return "";
  return "<section id=\"longbench\">\n<h2>LongBench per task</h2>\n" + out + "</section>\n";
}

std::string kv_row(const std::string& key, const std::string& value) {
  return "<tr><th>" + xml_escape(key) + "</th><td>" + xml_escape(value) + "</td></tr>\n";
}

std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string header_section(const std::vector<results::ResultFile>& rs) {
  std::string out = "<section id=\"headers\">\n<h2>Results</h2>\n<div class=\"headers\">\n";
  for (size_t i = 0; i < rs.size(); ++i) {
    const results::ResultFile& r = rs[i];
    out += fmt::format("<div class=\"header-box\" id=\"result-{}\">\n<h3>{} &middot; {}</h3>\n<table class=\"kv\">\n", i,
                       xml_escape(r.label), xml_escape(r.kind));
    out += kv_row("file", r.path);
    const json* settings = nullptr;
    if (r.json.contains("header") && r.json["header"].is_object()) {
      const json& h = r.json["header"];
      for (const char* k : {"task", "foxeval_version", "date", "elapsed_s"})
        if (h.contains(k)) out += kv_row(k, scalar_text(h[k]));
      if (h.contains("machine") && h["machine"].is_object())
        for (auto it = h["machine"].begin(); it != h["machine"].end(); ++it) out += kv_row("machine." + it.key(), scalar_text(it.value()));
      if (h.contains("settings")) settings = &h["settings"];
    }
    if (!settings && r.json.contains("identity")) settings = &r.json["identity"];
    if (settings && settings->is_object())
      for (const char* k : {"model", "model_type", "num_parameters", "dtype", "device_type"})
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

}  // namespace

std::string longbench_bars_svg(const results::Table& t) {
  const double W = 1160, H = 380, left = 48, right = 12, top = 46, bottom = 78;
  const double plot_w = W - left - right, plot_h = H - top - bottom;
  double vmax = 0;
  for (const auto& row : t.values)
    for (const auto& v : row)
      if (v) vmax = std::max(vmax, *v);
  const double ymax = std::max(10.0, std::ceil(vmax / 10.0) * 10.0);
  const size_t groups = t.columns.size(), models = std::max<size_t>(1, t.rows.size());
  const double gw = plot_w / static_cast<double>(groups), bw = gw * 0.8 / static_cast<double>(models);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H);
  for (double y = 0; y <= ymax + 1e-9; y += 10) {
    const double py = top + plot_h * (1 - y / ymax);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e3e3e3\"/>\n", left, py, W - right, py);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{:.0f}</text>\n", left - 6, py + 4, y);
  }
  for (size_t c = 0; c < groups; ++c) {
    const double gx = left + gw * static_cast<double>(c) + gw * 0.1;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const double x = gx + bw * static_cast<double>(r);
      const std::optional<double>& v = t.values[r][c];
      if (!v) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#999\">\xE2\x80\x93</text>\n",
                           x + bw / 2, top + plot_h - 3);
        continue;
      }
      const double h = plot_h * std::clamp(*v / ymax, 0.0, 1.0);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}, {}: {}</title></rect>\n", x,
          top + plot_h - h, bw, h, kPalette[r % 10], xml_escape(t.rows[r]), xml_escape(t.columns[c].label),
          results::format_value(t.columns[c], *v));
    }
    const double cx = left + gw * (static_cast<double>(c) + 0.5), cy = top + plot_h + 10;
    svg += fmt::format(
        "<text x=\"{0:.1f}\" y=\"{1:.1f}\" font-size=\"12\" text-anchor=\"end\" transform=\"rotate(-35 {0:.1f} {1:.1f})\">{2}</text>\n",
        cx, cy, xml_escape(t.columns[c].label));
  }
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n", left, top + plot_h, W - right);
  double lx = left;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"14\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", lx, kPalette[r % 10]);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"24\" font-size=\"13\">{}</text>\n", lx + 17, xml_escape(t.rows[r]));
    lx += 30 + 7.5 * static_cast<double>(t.rows[r].size());
  }
  return svg + "</svg>\n";
}

std::string render_report(const std::vector<results::ResultFile>& rs, const ReportOptions& options) {
  if (rs.empty()) throw Error("report: no result files given");
  const std::vector<results::Table> tables = results::build_tables(rs);
  const std::string loss = loss_section(rs), niah = niah_section(rs, options.niah_train_length),
                    longbench = longbench_section(tables);
  std::string nav = "<a href=\"#tables\">Tables</a>";
  if (!loss.empty()) nav += "<a href=\"#loss\">Loss per position</a>";
  if (!niah.empty()) nav += "<a href=\"#niah\">Needle in a haystack</a>";
  if (!longbench.empty()) nav += "<a href=\"#longbench\">LongBench per task</a>";
  nav += "<a href=\"#headers\">Results</a>";

  std::set<std::string> models;
  for (const results::ResultFile& r : rs) models.insert(r.label);
  const size_t n_models = models.size();

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + xml_escape(options.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<header>\n<h1>" + xml_escape(options.title) + "</h1>\n";
  out += fmt::format("<p class=\"meta\">{} result files, {} models. Bold: best in its column; underlined: second best "
                     "(lower is better for perplexity and loss); &ndash;: not in the results.</p>\n",
                     rs.size(), n_models);
  out += "<nav>" + nav + "</nav>\n</header>\n";
  out += "<section id=\"tables\">\n<h2>Tables</h2>\n";
  for (const results::Table& t : tables) out += html_table(t);
  out += "</section>\n" + loss + niah + longbench + header_section(rs);
  return out + "</body>\n</html>\n";
}

void write_report(const std::vector<std::string>& files, const std::vector<std::string>& labels, const std::string& out,
                  const ReportOptions& options) {
  write_text_atomic(out, render_report(results::read_results(files, labels), options));
}

}  // namespace foxeval::report
