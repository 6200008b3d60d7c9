#include "tasks/loss/loss_table.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>

#include "tasks/loss/loss_plot.h"
#include "tasks/results/report.h"

using nlohmann::json;

namespace foxeval::loss {
namespace {

using results::Column;
using results::Table;

const json& defs() { return results::task_data("loss/loss_table.json"); }

// val/loss_avg_len_L for every L of the result, as columns in increasing L.
// Results on a text corpus (`loss --text`) get a table per corpus, named by its dataset id (or the
// files' description); LongCrawl64's token rows keep the "loss" table.
std::string corpus_of(const results::ResultFile& r) {
  const json* id = r.json.contains("identity") ? &r.json["identity"] : nullptr;
  if (!id || !id->contains("text")) return "";
  const json& source = (*id)["text"].value("source", json::object());
  return source.contains("dataset") ? source["dataset"].get<std::string>() + ":" + source.value("split", "")
                                    : id->value("data", "text");
}

void add(results::TableFiller& f, const results::ResultFile& r) {
  const std::string corpus = corpus_of(r);
  std::string id = "loss-" + corpus;  // an HTML id in the report: letters, digits and '-'
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  Table& t = corpus.empty() ? f.table("loss", "Held-out loss: mean over the first L tokens (lower is better)")
                            : f.table(id, "Loss on " + corpus + ": mean over the first L tokens (lower is better)");
  const std::string prefix = "val/loss_avg_len_";
  const size_t row = f.row(t, r.label);
  for (auto it = r.json.begin(); it != r.json.end(); ++it) {
    if (it.key().rfind(prefix, 0) != 0 || !it.value().is_number()) continue;
    const std::string len = it.key().substr(prefix.size());
    if (len.empty() || len.find_first_not_of("0123456789") != std::string::npos) continue;  // not a length
    const size_t c = f.column(t, {"loss_len_" + len, len, len, "", "", true, 3});
    f.set(t, row, c, it.value().get<double>(), r, it.key());
  }
}

// A result without a header: its "kind".
bool recognises(const json& r) { return r.contains("kind") && r["kind"] == "foxeval-loss"; }

void finish(std::vector<Table>& tables) {
  for (Table& t : tables)
    results::sort_columns(t, [](const Column& a, const Column& b) { return std::stoll(a.label) < std::stoll(b.label); });
}

std::vector<results::Setting> settings(const results::ResultFile& r) {
  return results::paper_settings(r, defs()["paper_settings"]);
}

// The per-token loss curves of every result that has them.
std::vector<results::ReportSection> report(const results::ReportInput& in) {
  std::vector<PlotSeries> series;
  std::string notes;
  for (const results::ResultFile* r : in.results) {
    const json& v = r->json.contains("val/loss_per_token") ? r->json["val/loss_per_token"] : json();
    if (!v.is_array() || v.empty()) {
      notes += "<p class=\"note\">" + xml_escape(r->path) + ": no val/loss_per_token, not drawn.</p>\n";
      continue;
    }
    PlotSeries s{r->label, {}};
    for (const json& x : v) s.values.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    series.push_back(std::move(s));
  }
  if (series.empty() && notes.empty()) return {};
  std::string html = notes;
  if (!series.empty()) {
    PlotOptions opts;
    opts.width = 900;
    opts.height = 520;
    html += report::figure_html("figure-loss", loss_plot_svg(series, opts),
                                "Per-token held-out loss against token position (log scale), averaged in log-spaced bins.");
  }
  return {{"loss", "Loss per position", html, 10}};
}

}  // namespace

results::ResultKind table_kind() {
  // task, order, add, recognises, finish, settings, latex, report (tasks/result_kind.h)
  return {"loss", 30, add, recognises, finish, settings, nullptr, report};
}

}  // namespace foxeval::loss
