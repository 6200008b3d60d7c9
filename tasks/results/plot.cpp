#include "tasks/results/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/errors.h"

namespace foxeval {

std::vector<SmoothedPoint> smooth_log_bins(const std::vector<double>& values, int bins) {
  std::vector<SmoothedPoint> out;
  const std::size_t n = values.size();
  if (n == 0) return out;
  if (bins < 1) bins = 1;
  // Bin k holds the positions p with (N+1)^(k/bins) <= p < (N+1)^((k+1)/bins): the edges are
  // log-spaced, the last one is N + 1, so every position 1..N is in exactly one bin.
  const double log_end = std::log(static_cast<double>(n) + 1.0);
  std::size_t p = 1;  // first position not yet binned
  for (int k = 0; k < bins && p <= n; ++k) {
    std::size_t end = n + 1;  // one past the bin's last position
    if (k + 1 < bins) {
      end = static_cast<std::size_t>(std::ceil(std::exp(log_end * (k + 1) / bins) - 1e-9));
      end = std::min(std::max(end, p), n + 1);
    }
    double sum = 0, log_sum = 0;
    std::size_t count = 0;
    for (; p < end; ++p) {
      const double v = values[p - 1];
      if (!std::isfinite(v)) continue;
      sum += v;
      log_sum += std::log(static_cast<double>(p));
      ++count;
    }
    if (count > 0) out.push_back({std::exp(log_sum / count), sum / count});
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kPaletteSize = 10;
const char* const kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

bool is_power_of_two(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// 1, 10, 100, 1k (1000 or 1024), 10k, 64k (65536), 1M (2^20 or 10^6); other values as integers.
std::string position_label(long long p) {
  if (p >= 1048576 && is_power_of_two(p)) return fmt::format("{}M", p / 1048576);
  if (p >= 1024 && is_power_of_two(p)) return fmt::format("{}k", p / 1024);
  if (p >= 1000000 && p % 1000000 == 0) return fmt::format("{}M", p / 1000000);
  if (p >= 1000 && p % 1000 == 0) return fmt::format("{}k", p / 1000);
  return fmt::format("{}", p);
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over `span`.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1.0 : norm < 3.5 ? 2.0 : norm < 7.5 ? 5.0 : 10.0) * mag;
}

std::string y_label(double v, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  if (std::fabs(v) < step * 1e-6) v = 0;  // no "-0.0"
  return fmt::format("{:.{}f}", v, decimals);
}

struct Rect {
  double x, y, w, h;
  bool contains(double px, double py) const { return px >= x && px <= x + w && py >= y && py <= y + h; }
};

}  // namespace

std::string line_plot_svg(const std::vector<PlotSeries>& series, const PlotOptions& opts) {
  if (series.empty()) throw Error("plot: no series to draw");
  if ((opts.ymin && !std::isfinite(*opts.ymin)) || (opts.ymax && !std::isfinite(*opts.ymax)))
    throw Error("plot: --ymin and --ymax must be finite numbers");
  if (opts.ymin && opts.ymax && !(*opts.ymin < *opts.ymax))
    throw Error(fmt::format("plot: --ymin ({}) must be below --ymax ({})", *opts.ymin, *opts.ymax));

  // Smoothed curves and the data's extent.
  std::vector<std::vector<SmoothedPoint>> curves;
  std::size_t max_len = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const PlotSeries& s : series) {
    if (s.values.empty()) throw Error(fmt::format("plot: series '{}' has no values", s.label));
    curves.push_back(smooth_log_bins(s.values, opts.bins));
    if (curves.back().empty()) throw Error(fmt::format("plot: series '{}' has no finite values", s.label));
    max_len = std::max(max_len, s.values.size());
    for (const SmoothedPoint& pt : curves.back()) {
      lo = std::min(lo, pt.value);
      hi = std::max(hi, pt.value);
    }
  }

  // y range: the data's, padded by 5%, unless given.
  const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(0.5, 0.05 * std::fabs(hi));
  double y0 = opts.ymin ? *opts.ymin : lo - pad;
  double y1 = opts.ymax ? *opts.ymax : hi + pad;
  if (!(y0 < y1)) {  // only one end given, on the wrong side of the data
    if (opts.ymin) y1 = y0 + 1.0;
    else y0 = y1 - 1.0;
  }

  // x range: positions 1..seq_len on a log scale.
  const double x_max = std::max<double>(static_cast<double>(max_len), 2.0);
  const double lx0 = 0.0, lx1 = std::log10(x_max);

  const double W = std::max(opts.width, 300), H = std::max(opts.height, 200);
  const double left = 78, right = 24, top = opts.title.empty() ? 24 : 52, bottom = 66;
  const Rect area{left, top, W - left - right, H - top - bottom};
  auto sx = [&](double pos) { return area.x + (std::log10(pos) - lx0) / (lx1 - lx0) * area.w; };
  auto sy = [&](double v) { return area.y + (y1 - v) / (y1 - y0) * area.h; };

  std::string svg;
  auto out = [&svg](const std::string& s) {
    svg += s;
    svg += '\n';
  };
  out(fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                  R"(font-family="{2}">)",
                  W, H, kFont));
  out(fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>)", W, H));
  out(fmt::format(R"(<defs><clipPath id="plot-area"><rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}"/>)"
                  R"(</clipPath></defs>)",
                  area.x, area.y, area.w, area.h));
  if (!opts.title.empty())
    out(fmt::format(R"(<text x="{:.2f}" y="32" font-size="18" font-weight="bold" text-anchor="middle" fill="#222">{}</text>)",
                    area.x + area.w / 2, xml_escape(opts.title)));

  // x ticks: powers of 2 up to 1k positions, else powers of 10 (with unlabelled minor ticks at
  // 2..9 x 10^k); the last position gets a label too when it has room.
  struct Tick {
    double pos;
    bool major;
  };
  std::vector<Tick> xticks;
  const long long n_pos = static_cast<long long>(x_max);
  if (n_pos <= 1024) {
    for (long long p = 1; p <= n_pos; p *= 2) xticks.push_back({static_cast<double>(p), true});
  } else {
    for (long long dec = 1; dec <= n_pos; dec *= 10) {
      xticks.push_back({static_cast<double>(dec), true});
      for (int m = 2; m <= 9 && dec * m <= n_pos; ++m) xticks.push_back({static_cast<double>(dec * m), false});
    }
  }
  double last_major = 1;
  for (const Tick& t : xticks)
    if (t.major) last_major = std::max(last_major, t.pos);
  if (static_cast<double>(n_pos) > last_major && sx(static_cast<double>(n_pos)) - sx(last_major) >= 40)
    xticks.push_back({static_cast<double>(n_pos), true});

  // y ticks.
  const double ystep = nice_step(y1 - y0, 6);
  std::vector<double> yticks;
  for (double v = std::ceil(y0 / ystep - 1e-9) * ystep; v <= y1 + ystep * 1e-9; v += ystep) yticks.push_back(v);

  // Grid.
  for (const Tick& t : xticks) {
    const double x = sx(t.pos);
    out(fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{0:.2f}" y2="{2:.2f}" stroke="{3}" stroke-width="1"/>)", x,
                    area.y, area.y + area.h, t.major ? "#e3e3e3" : "#f3f3f3"));
  }
  for (double v : yticks) {
    const double y = sy(v);
    out(fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{2:.2f}" y2="{1:.2f}" stroke="#e3e3e3" stroke-width="1"/>)",
                    area.x, y, area.x + area.w));
  }

  // The training length, where the curves go past it (loss beyond it is length extrapolation).
  if (opts.train_length && *opts.train_length >= 1 && *opts.train_length <= x_max) {
    const double x = sx(*opts.train_length);
    out(fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{0:.2f}" y2="{2:.2f}" stroke="#555" stroke-width="1.5" )"
                    R"(stroke-dasharray="6 4"/>)",
                    x, area.y, area.y + area.h));
    out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" text-anchor="end" fill="#555">training length {}</text>)",
                    x - 4, area.y + 14, static_cast<long long>(*opts.train_length)));
  }

  // Curves: one polyline per series, clipped to the plot area.
  std::vector<std::vector<std::pair<double, double>>> pixels(curves.size());
  for (std::size_t i = 0; i < curves.size(); ++i) {
    std::string pts;
    for (const SmoothedPoint& pt : curves[i]) {
      const double x = sx(pt.position), y = sy(pt.value);
      pixels[i].push_back({x, y});
      if (!pts.empty()) pts += ' ';
      pts += fmt::format("{:.2f},{:.2f}", x, y);
    }
    const std::size_t c = i % kPaletteSize;
    const std::string dash = i >= kPaletteSize ? R"( stroke-dasharray="7,4")" : "";
    out(fmt::format(R"svg(<polyline clip-path="url(#plot-area)" fill="none" stroke="{}" stroke-width="2" )svg"
                    R"(stroke-linejoin="round" stroke-linecap="round"{} points="{}"/>)",
                    kPalette[c], dash, pts));
  }

  // Frame, ticks and tick labels.
  out(fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="none" stroke="#333" stroke-width="1"/>)",
                  area.x, area.y, area.w, area.h));
  const double axis_y = area.y + area.h;
  for (const Tick& t : xticks) {
    const double x = sx(t.pos);
    out(fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{0:.2f}" y2="{2:.2f}" stroke="#333" stroke-width="1"/>)", x,
                    axis_y, axis_y + (t.major ? 6 : 3)));
    if (t.major)
      out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="14" text-anchor="middle" fill="#222">{}</text>)", x,
                      axis_y + 22, position_label(static_cast<long long>(t.pos))));
  }
  for (double v : yticks) {
    const double y = sy(v);
    out(fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{2:.2f}" y2="{1:.2f}" stroke="#333" stroke-width="1"/>)",
                    area.x - 6, y, area.x));
    out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="14" text-anchor="end" fill="#222">{}</text>)", area.x - 10,
                    y + 5, y_label(v, ystep)));
  }

  // Axis titles.
  out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="16" text-anchor="middle" fill="#222">{}</text>)",
                  area.x + area.w / 2, H - 14, xml_escape(opts.x_title)));
  out(fmt::format(R"(<text x="{0:.2f}" y="{1:.2f}" font-size="16" text-anchor="middle" fill="#222" )"
                  R"svg(transform="rotate(-90 {0:.2f} {1:.2f})">{2}</text>)svg",
                  22.0, area.y + area.h / 2, xml_escape(opts.y_title)));

  // Legend: in whichever corner covers the fewest curve points (top right first on ties).
  const double row_h = 22, swatch = 28, font = 14;
  std::size_t max_chars = 1;
  for (const PlotSeries& s : series) max_chars = std::max(max_chars, s.label.size());
  const double lw = std::min(10 + swatch + 8 + 0.6 * font * max_chars + 12, area.w - 20);
  const double lh = 10 + row_h * series.size();
  const double m = 10;
  const Rect corners[] = {{area.x + area.w - lw - m, area.y + m, lw, lh},
                          {area.x + m, area.y + area.h - lh - m, lw, lh},
                          {area.x + area.w - lw - m, area.y + area.h - lh - m, lw, lh},
                          {area.x + m, area.y + m, lw, lh}};
  Rect box = corners[0];
  std::size_t best = std::numeric_limits<std::size_t>::max();
  for (const Rect& r : corners) {
    std::size_t covered = 0;
    for (const auto& curve : pixels)
      for (const auto& [px, py] : curve) covered += r.contains(px, py);
    if (covered < best) {
      best = covered;
      box = r;
    }
  }
  out(fmt::format(R"(<g font-size="{}"><rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" rx="4" )"
                  R"(fill="#ffffff" fill-opacity="0.9" stroke="#bbb" stroke-width="1"/>)",
                  font, box.x, box.y, box.w, box.h));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double y = box.y + 5 + row_h * (i + 0.5);
    const std::string dash = i >= kPaletteSize ? R"( stroke-dasharray="7,4")" : "";
    out(fmt::format(R"(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}" stroke-width="2.5"{}/>)",
                    box.x + 10, y, box.x + 10 + swatch, y, kPalette[i % kPaletteSize], dash));
    out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" fill="#222">{}</text>)", box.x + 10 + swatch + 8, y + 5,
                    xml_escape(series[i].label)));
  }
  out("</g>");
  svg += "</svg>\n";
  return svg;
}

std::string plot_colour(std::size_t i) { return kPalette[i % kPaletteSize]; }

// Grouped bars: a group per column (summary columns after a gap, behind a dashed rule), a bar per
// row; a y axis with ticks, grid and its label; a value of 0 drawn as a thin mark (a missing one
// as a dash), so the two cannot be confused.
std::string bar_chart_svg(const results::Table& t, const BarChartOptions& o) {
  const double W = 1160, H = 400, left = 70, right = 12, top = 46, bottom = 82;
  const double plot_w = W - left - right, plot_h = H - top - bottom;
  double vmax = 0;
  for (const auto& row : t.values)
    for (const auto& v : row)
      if (v) vmax = std::max(vmax, *v);
  const double step = nice_step(std::max(vmax, 1e-9), 5);
  const double ymax = std::max(step, std::ceil(vmax / step - 1e-9) * step);
  // Group slots: one per column, plus a gap of half a slot before the first summary column.
  std::size_t summaries = 0;
  for (const results::Column& c : t.columns) summaries += c.summary;
  const bool apart = summaries > 0 && summaries < t.columns.size();
  const double slots = static_cast<double>(t.columns.size()) + (apart ? 0.5 : 0.0);
  const double gw = plot_w / std::max(1.0, slots);
  const std::size_t models = std::max<std::size_t>(1, t.rows.size());
  const double bw = gw * 0.8 / static_cast<double>(models);
  auto group_x = [&](std::size_t c) {
    bool after_gap = false;
    for (std::size_t k = 0; k <= c; ++k) after_gap = after_gap || (apart && t.columns[k].summary);
    return left + gw * (static_cast<double>(c) + (after_gap ? 0.5 : 0.0));
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"{2}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H, kFont);
  // Grid, y ticks and their labels.
  for (double y = 0; y <= ymax + step * 1e-9; y += step) {
    const double py = top + plot_h * (1 - y / ymax);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e3e3e3\"/>\n", left, py, W - right, py);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>\n", left - 5, py, left, py);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", left - 8, py + 4,
                       y_label(y, step));
  }
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n", left, top, top + plot_h);
  svg += fmt::format(
      "<text x=\"{0:.1f}\" y=\"{1:.1f}\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 {0:.1f} {1:.1f})\">{2}</text>\n",
      18.0, top + plot_h / 2, xml_escape(o.y_label));
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const double x0 = group_x(c);
    if (apart && t.columns[c].summary && (c == 0 || !t.columns[c - 1].summary)) {
      const double rx = x0 - gw * 0.25;
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\" stroke-dasharray=\"4,3\"/>\n",
                         rx, top, top + plot_h);
    }
    const double gx = x0 + gw * 0.1;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const double x = gx + bw * static_cast<double>(r);
      const std::optional<double>& v = t.values[r][c];
      if (!v) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#666\">\xE2\x80\x93</text>\n",
                           x + bw / 2, top + plot_h - 4);
        continue;
      }
      const double h = std::max(1.5, plot_h * std::clamp(*v / ymax, 0.0, 1.0));  // 0: a thin mark
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}, {}: {}</title></rect>\n", x,
          top + plot_h - h, bw, h, plot_colour(r), xml_escape(t.rows[r]), xml_escape(t.columns[c].label),
          results::format_value(t.columns[c], *v));
    }
    const double cx = x0 + gw * 0.5, cy = top + plot_h + 10;
    svg += fmt::format(
        "<text x=\"{0:.1f}\" y=\"{1:.1f}\" font-size=\"12\" text-anchor=\"end\"{3} transform=\"rotate(-35 {0:.1f} {1:.1f})\">{2}</text>\n",
        cx, cy, xml_escape(t.columns[c].label), t.columns[c].summary ? " font-weight=\"bold\"" : "");
  }
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n", left, top + plot_h, W - right);
  double lx = left;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"14\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", lx, plot_colour(r));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"24\" font-size=\"13\">{}</text>\n", lx + 17, xml_escape(t.rows[r]));
    lx += 17 + 8.0 * static_cast<double>(t.rows[r].size()) + 24;  // swatch, text (about 8 px a character), gap
  }
  return svg + "</svg>\n";
}

}  // namespace foxeval
