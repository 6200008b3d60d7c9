#include "tasks/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {

std::vector<SmoothedPoint> smooth_log_bins(const std::vector<double>& loss, int bins) {
  std::vector<SmoothedPoint> out;
  const std::size_t n = loss.size();
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
      const double v = loss[p - 1];
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

std::string loss_plot_svg(const std::vector<PlotSeries>& series, const PlotOptions& opts) {
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
    if (s.loss.empty()) throw Error(fmt::format("plot: series '{}' has no values", s.label));
    curves.push_back(smooth_log_bins(s.loss, opts.bins));
    if (curves.back().empty()) throw Error(fmt::format("plot: series '{}' has no finite values", s.label));
    max_len = std::max(max_len, s.loss.size());
    for (const SmoothedPoint& pt : curves.back()) {
      lo = std::min(lo, pt.loss);
      hi = std::max(hi, pt.loss);
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

  // Curves: one polyline per series, clipped to the plot area.
  std::vector<std::vector<std::pair<double, double>>> pixels(curves.size());
  for (std::size_t i = 0; i < curves.size(); ++i) {
    std::string pts;
    for (const SmoothedPoint& pt : curves[i]) {
      const double x = sx(pt.position), y = sy(pt.loss);
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
  out(fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="16" text-anchor="middle" fill="#222">Token position</text>)",
                  area.x + area.w / 2, H - 14));
  out(fmt::format(R"(<text x="{0:.2f}" y="{1:.2f}" font-size="16" text-anchor="middle" fill="#222" )"
                  R"svg(transform="rotate(-90 {0:.2f} {1:.2f})">Loss</text>)svg",
                  22.0, area.y + area.h / 2));

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

PlotSeries read_loss_series(const std::string& file, const std::string& label) {
  const nlohmann::json r = read_json(file);  // errors name the file
  if (!r.is_object() || !r.contains("val/loss_per_token"))
    throw Error(fmt::format("{}: no \"val/loss_per_token\" (not a `foxeval loss` result?)", file));
  const nlohmann::json& arr = r["val/loss_per_token"];
  if (!arr.is_array()) throw Error(fmt::format("{}: \"val/loss_per_token\" is not an array", file));
  if (arr.empty()) throw Error(fmt::format("{}: \"val/loss_per_token\" is empty", file));
  PlotSeries s;
  s.loss.reserve(arr.size());
  bool any_finite = false;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const nlohmann::json& v = arr[i];
    if (v.is_null()) {  // NaN is written as null
      s.loss.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      s.loss.push_back(v.get<double>());
      any_finite = any_finite || std::isfinite(s.loss.back());
    } else {
      throw Error(fmt::format("{}: \"val/loss_per_token\"[{}] is not a number", file, i));
    }
  }
  if (!any_finite) throw Error(fmt::format("{}: \"val/loss_per_token\" has no finite value", file));

  s.label = label;
  if (s.label.empty() && r.contains("identity") && r["identity"].is_object() && r["identity"].contains("model") &&
      r["identity"]["model"].is_string()) {
    std::string model = r["identity"]["model"].get<std::string>();
    while (model.size() > 1 && model.back() == '/') model.pop_back();
    const std::size_t slash = model.find_last_of('/');
    s.label = slash == std::string::npos ? model : model.substr(slash + 1);
  }
  if (s.label.empty()) {
    std::string name = file;
    const std::size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
    s.label = name;
  }
  return s;
}

void plot_loss_files(const std::vector<std::string>& files, const std::vector<std::string>& labels,
                     const std::string& out, const PlotOptions& opts) {
  if (files.empty()) throw Error("plot loss: no result files given");
  if (labels.size() > files.size())
    throw Error(fmt::format("plot loss: {} --label values for {} result files", labels.size(), files.size()));
  std::vector<PlotSeries> series;
  for (std::size_t i = 0; i < files.size(); ++i)
    series.push_back(read_loss_series(files[i], i < labels.size() ? labels[i] : ""));
  const std::string svg = loss_plot_svg(series, opts);

  const std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
    f << svg;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw Error(fmt::format("{}: write failed", tmp));
    }
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw Error(fmt::format("{}: cannot rename to {} ({})", tmp, out, std::strerror(err)));
  }
}

}  // namespace foxeval
