// `foxeval plot loss` and the bar chart: the SVG's structure (one polyline per series, legend, log-x tick labels),
// log-bin smoothing, labels from results, and errors that name the file. Two fake results
// (a power-law curve and one that flattens) are generated here; set FOXEVAL_PLOT_SAMPLE=FIG.svg
// to keep the sample figure for a look.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "data/errors.h"
#include "tasks/loss/loss_plot.h"
#include "tasks/results/plot.h"
#include "tests/temp_files.h"

using namespace foxeval;
namespace fs = std::filesystem;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// loss = 3 + 2 / sqrt(pos) + noise; `flatten_at` > 0 holds the curve flat after that position
// (a model that stops improving with more context).
std::vector<double> fake_loss(std::size_t n, std::size_t flatten_at, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.03);
  std::vector<double> loss(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double pos = static_cast<double>(flatten_at > 0 ? std::min(i + 1, flatten_at) : i + 1);
    loss[i] = 3.0 + 2.0 / std::sqrt(pos) + (flatten_at > 0 ? 0.02 : 0.0) + noise(rng);
  }
  return loss;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    test::remove_tree(path);
    fs::create_directories(path);
  }
  ~TempDir() { test::remove_tree(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_result(const std::string& path, const std::string& model, const std::vector<double>& loss) {
  nlohmann::json r;
  r["identity"] = {{"model", model}, {"seq_len", loss.size()}};
  r["val/loss_per_token"] = loss;
  write_text(path, r.dump());
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("plot: log-bin smoothing") {
  SUBCASE("a constant series stays constant") {
    const std::vector<double> flat(65536, 3.25);
    const auto pts = smooth_log_bins(flat, 200);
    REQUIRE(pts.size() > 150);
    CHECK(pts.size() <= 200);
    for (const auto& p : pts) CHECK(p.value == doctest::Approx(3.25).epsilon(1e-12));
    CHECK(pts.front().position == doctest::Approx(1.0));
    CHECK(pts.back().position < 65536.0);
    for (std::size_t i = 1; i < pts.size(); ++i) CHECK(pts[i].position > pts[i - 1].position);
  }
  SUBCASE("every position counts once: bins partition 1..N") {
    // With loss = position, the bin means are the bins' arithmetic mean positions; weighting them
    // back by bin size must give the overall mean (N + 1) / 2 only if no position is lost or doubled.
    std::vector<double> pos(1000);
    for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<double>(i + 1);
    const auto pts = smooth_log_bins(pos, 50);
    CHECK(pts.front().value == 1.0);
    // Early bins hold single positions, late bins many.
    CHECK(pts[1].value == 2.0);
    CHECK(pts.back().value > 900.0);
    std::vector<double> ones(1000, 1.0);
    CHECK(smooth_log_bins(ones, 50).size() == pts.size());
  }
  SUBCASE("non-finite values are left out") {
    std::vector<double> v(100, 2.0);
    v[50] = std::nan("");
    for (const auto& p : smooth_log_bins(v, 20)) CHECK(p.value == 2.0);
  }
  SUBCASE("short series") {
    CHECK(smooth_log_bins({}, 200).empty());
    CHECK(smooth_log_bins({4.0}, 200).size() == 1);
    CHECK(smooth_log_bins({4.0, 5.0, 6.0}, 200).size() == 3);
  }
}

TEST_CASE("plot: the SVG has one curve per series, the legend and log-x ticks") {
  const std::vector<PlotSeries> series = {{"FoX (Pro)", fake_loss(65536, 0, 1)},
                                          {"Transformer <Pro> & co", fake_loss(65536, 1024, 2)}};
  PlotOptions opts;
  opts.title = "Per-token loss";
  const std::string svg = loss_plot_svg(series, opts);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(ends_with(svg, "</svg>\n"));
  CHECK(count(svg, "<polyline") == 2);
  CHECK(count(svg, "<text") == count(svg, "</text>"));
  CHECK(svg.find("fill=\"#ffffff\"") != std::string::npos);
  CHECK(svg.find(">FoX (Pro)</text>") != std::string::npos);
  CHECK(svg.find(">Transformer &lt;Pro&gt; &amp; co</text>") != std::string::npos);  // escaped
  CHECK(svg.find(">Per-token loss</text>") != std::string::npos);
  CHECK(svg.find(">Token position</text>") != std::string::npos);
  CHECK(svg.find(">Loss</text>") != std::string::npos);
  for (const char* tick : {">1<", ">10<", ">100<", ">1k<", ">10k<", ">64k<"}) CHECK(svg.find(tick) != std::string::npos);

  SUBCASE("short contexts get powers-of-2 ticks") {
    const std::string small = loss_plot_svg({{"a", fake_loss(128, 0, 3)}}, PlotOptions{});
    CHECK(count(small, "<polyline") == 1);
    for (const char* tick : {">1<", ">2<", ">4<", ">16<", ">128<"}) CHECK(small.find(tick) != std::string::npos);
  }
  SUBCASE("--ymin/--ymax set the loss axis") {
    PlotOptions o;
    o.ymin = 3.0;
    o.ymax = 4.0;
    const std::string s = loss_plot_svg(series, o);
    CHECK(s.find(">3.0<") != std::string::npos);
    CHECK(s.find(">4.0<") != std::string::npos);
    o.ymin = 5.0;
    CHECK(test::error_of([&] { loss_plot_svg(series, o); }).find("--ymin") != std::string::npos);
    o.ymin = std::numeric_limits<double>::infinity();
    CHECK(test::error_of([&] { loss_plot_svg(series, o); }).find("--ymin") != std::string::npos);
  }
  SUBCASE("a constant series draws a flat line") {
    const std::string s = loss_plot_svg({{"flat", std::vector<double>(4096, 2.5)}}, PlotOptions{});
    const std::size_t at = s.find("points=\"");
    REQUIRE(at != std::string::npos);
    std::istringstream pts(s.substr(at + 8, s.find('"', at + 8) - at - 8));
    std::string xy, first_y;
    while (pts >> xy) {
      const std::string y = xy.substr(xy.find(',') + 1);
      if (first_y.empty()) first_y = y;
      CHECK(y == first_y);
    }
  }
}

TEST_CASE("plot: result files, labels, atomic output and errors") {
  TempDir dir("foxeval-plot");
  const std::string fox = dir.file("fox.json"), tfm = dir.file("transformer.json"), out = dir.file("fig.svg");
  write_result(fox, "/checkpoints/fox_pro_760m/", fake_loss(65536, 0, 4));
  write_result(tfm, "/checkpoints/transformer_pro_760m", fake_loss(65536, 1024, 5));

  PlotOptions opts;
  opts.title = "LongCrawl64, 760M";
  plot_loss_files({fox, tfm}, {}, out, opts);
  const std::string svg = read_text(out);
  CHECK(!fs::exists(out + ".tmp"));
  CHECK(count(svg, "<polyline") == 2);
  CHECK(svg.find(">fox_pro_760m</text>") != std::string::npos);  // model basename, trailing '/' ignored
  CHECK(svg.find(">transformer_pro_760m</text>") != std::string::npos);
  if (const char* keep = std::getenv("FOXEVAL_PLOT_SAMPLE")) write_text(keep, svg);

  SUBCASE("--label values come first, in order; the file name is the last resort") {
    nlohmann::json bare = {{"val/loss_per_token", {3.0, 2.5, 2.0}}};
    write_text(dir.file("bare.json"), bare.dump());
    plot_loss_files({fox, tfm, dir.file("bare.json")}, {"FoX"}, out, PlotOptions{});
    const std::string s = read_text(out);
    CHECK(count(s, "<polyline") == 3);
    CHECK(s.find(">FoX</text>") != std::string::npos);
    CHECK(s.find(">fox_pro_760m</text>") == std::string::npos);
    CHECK(s.find(">transformer_pro_760m</text>") != std::string::npos);
    CHECK(s.find(">bare</text>") != std::string::npos);
    CHECK(test::error_of([&] { plot_loss_files({fox}, {"a", "b"}, out, PlotOptions{}); }).find("--label") !=
          std::string::npos);
  }
  SUBCASE("errors name the file") {
    const std::string missing = dir.file("missing.json");
    CHECK(test::error_of([&] { plot_loss_files({fox, missing}, {}, out, PlotOptions{}); }).find(missing) !=
          std::string::npos);

    const std::string no_key = dir.file("no_key.json");
    write_text(no_key, R"({"identity": {"model": "/m"}, "val/loss_avg_len_128": 3.0})");
    const std::string e1 = test::error_of([&] { plot_loss_files({no_key}, {}, out, PlotOptions{}); });
    CHECK(e1.find(no_key) != std::string::npos);
    CHECK(e1.find("val/loss_per_token") != std::string::npos);

    const std::string empty = dir.file("empty.json");
    write_text(empty, R"({"val/loss_per_token": []})");
    const std::string e2 = test::error_of([&] { plot_loss_files({empty}, {}, out, PlotOptions{}); });
    CHECK(e2.find(empty) != std::string::npos);
    CHECK(e2.find("empty") != std::string::npos);

    const std::string broken = dir.file("broken.json");
    write_text(broken, "{\"val/loss_per_token\": [1.0,");
    CHECK(test::error_of([&] { plot_loss_files({broken}, {}, out, PlotOptions{}); }).find(broken) != std::string::npos);

    CHECK(!test::error_of([&] { plot_loss_files({}, {}, out, PlotOptions{}); }).empty());
    CHECK(!test::error_of([&] { plot_loss_files({fox}, {}, dir.file("no/such/dir/fig.svg"), PlotOptions{}); }).empty());
  }
}

TEST_CASE("plot: bar chart with a y axis, zero bars visible, the average set apart") {
  results::Table t;
  t.id = "scores";
  t.title = "Scores";
  t.columns = {{"a", "A", "A", "", "", false, 2}, {"b", "B", "B", "", "", false, 2}, {"avg", "Avg", "Avg", "", "", false, 2, true}};
  t.rows = {"m1", "m2"};
  t.values = {{42.5, 0.0, 21.25}, {30.0, std::nullopt, std::nullopt}};
  BarChartOptions o;
  o.y_label = "Score (0-100)";
  const std::string svg = bar_chart_svg(t, o);
  CHECK(svg.find(">Score (0-100)</text>") != std::string::npos);
  for (const char* tick : {">0<", ">10<", ">20<", ">30<", ">40<", ">50<"}) CHECK_MESSAGE(svg.find(tick) != std::string::npos, tick);
  CHECK(svg.find(">60<") == std::string::npos);  // the axis ends at the first tick above the data
  CHECK(count(svg, "<title>") == 4);  // four values, the two missing ones drawn as dashes
  CHECK(count(svg, ">\xE2\x80\x93</text>") == 2);
  // The zero is a thin bar, not nothing.
  const std::size_t zero = svg.find("<title>m1, B: 0.00</title>");
  REQUIRE(zero != std::string::npos);
  const std::size_t rect = svg.rfind("<rect", zero);
  const std::string tag = svg.substr(rect, zero - rect);
  CHECK(tag.find("height=\"1.5\"") != std::string::npos);
  // Avg: after a dashed rule, its label in bold.
  CHECK(count(svg, "stroke-dasharray") == 1);
  CHECK(svg.find("font-weight=\"bold\" transform=\"rotate(-35") != std::string::npos);
  const std::size_t rule = svg.find("stroke-dasharray");
  CHECK(rule > svg.find("<title>m1, B"));
  CHECK(rule < svg.find("<title>m1, Avg"));
}
