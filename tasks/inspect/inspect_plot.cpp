#include "tasks/inspect/inspect_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/results/plot.h"

namespace foxeval::inspect {
namespace {

const char* const kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// viridis at t in [0, 1] (five stops, linear in RGB between them).
std::string viridis(double t) {
  static const int stops[5][3] = {{0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b}, {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62}, {0xfd, 0xe7, 0x25}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int s = std::min(3, static_cast<int>(t));
  const double u = t - s;
  int rgb[3];
  for (int c = 0; c < 3; ++c) rgb[c] = static_cast<int>(std::lround(stops[s][c] + (stops[s + 1][c] - stops[s][c]) * u));
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

constexpr int kLevels = 128;  // colour levels of a matrix: neighbouring cells of one level merge into one rect

// One matrix panel at (x, y), `size` pixels square: rects merged along rows.
std::string matrix_panel(const std::vector<double>& v, int64_t n, double x, double y, double size, double log10_min) {
  const double cell = size / static_cast<double>(n);
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = 0;
    while (j <= i) {
      auto level = [&](int64_t jj) {
        const double val = v[i * n + jj];
        if (!(val > 0)) return 0;
        const double t = (std::log10(val) - log10_min) / -log10_min;
        return std::clamp(static_cast<int>(std::lround(t * (kLevels - 1))), 0, kLevels - 1);
      };
      const int lv = level(j);
      int64_t e = j + 1;
      while (e <= i && level(e) == lv) ++e;
      out += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"/>)", x + j * cell, y + i * cell,
                         (e - j) * cell + 0.05, cell + 0.05, viridis(static_cast<double>(lv) / (kLevels - 1)));
      out += '\n';
      j = e;
    }
  }
  out += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="none" stroke="#333"/>)", x, y, size,
                     size);
  out += '\n';
  return out;
}

// A vertical colour bar for log10 values [lo, hi] with integer-decade labels.
std::string colour_bar(double x, double y, double h, double lo, double hi, const std::string& label,
                       const std::function<std::string(double)>& tick_text) {
  std::string out;
  const int steps = 64;
  for (int s = 0; s < steps; ++s) {
    const double t0 = static_cast<double>(s) / steps;
    out += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="14" height="{:.2f}" fill="{}"/>)", x, y + h * (1 - t0 - 1.0 / steps),
                       h / steps + 0.3, viridis(t0 + 0.5 / steps));
    out += '\n';
  }
  out += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="14" height="{:.2f}" fill="none" stroke="#333"/>)", x, y, h) + "\n";
  const double step = std::max(1.0, std::ceil((hi - lo) / 8.0));
  for (double v = std::ceil(lo); v <= hi + 1e-9; v += step) {
    const double py = y + h * (1 - (v - lo) / (hi - lo));
    out += fmt::format(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{2:.2f}" y2="{1:.2f}" stroke="#333"/>)", x + 14, py, x + 18) + "\n";
    out += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" fill="#222">{}</text>)", x + 21, py + 4, tick_text(v)) + "\n";
  }
  out += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" fill="#222">{}</text>)", x - 4, y - 8, xml_escape(label)) + "\n";
  return out;
}

// An upper bound on a label's width in pixels: DejaVu Sans (the first font asked for, wider than
// Helvetica and Arial) advances at most about 0.62 em for the characters drawn here (digits,
// lower-case letters, "(e^-5)"); bold text about 10% more. Code points, not bytes, count.
double text_width(const std::string& s, double font_size, bool bold = false) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return 0.62 * font_size * static_cast<double>(chars) * (bold ? 1.1 : 1.0);
}

std::string decade(double v) {
  if (v == 0) return "1";
  return fmt::format("1e{}", static_cast<int>(v));
}

std::string short_count(double r) {
  if (r >= 1e6) return fmt::format("{:.1f}M", r / 1e6);
  if (r >= 1e4) return fmt::format("{:.0f}k", r / 1e3);
  if (r >= 1e3) return fmt::format("{:.1f}k", r / 1e3);
  return fmt::format("{:.0f}", r);
}

}  // namespace

std::string attention_svg(const AttentionMaps& m, const std::string& title, double log10_min) {
  const int64_t n = m.end - m.begin;
  if (n < 1) throw Error("inspect attention: an empty span");
  const double size = std::clamp(4.0 * static_cast<double>(n), 240.0, 520.0), gap = 70, left = 60, top = 70;
  const double W = std::max(left + 2 * size + gap + 110, text_width(title, 17, true) + 20), H = top + size + 60;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" font-family="{2}">)",
      W, H, kFont);
  svg += "\n" + fmt::format(R"(<rect x="0" y="0" width="{:.0f}" height="{:.0f}" fill="#ffffff"/>)", W, H) + "\n";
  svg += fmt::format(R"(<text x="{:.2f}" y="26" font-size="17" font-weight="bold" text-anchor="middle" fill="#222">{}</text>)",
                     W / 2, xml_escape(title)) + "\n";
  const std::string window = fmt::format("window W = {} (1 inside, 0 outside)", m.window);
  const char* names[2] = {m.has_decay ? "decay exp(c_i - c_j)" : m.window > 0 ? window.c_str() : "decay (no forget gate: 1)",
                          "attention (softmax with the decay)"};
  for (int p = 0; p < 2; ++p) {
    const double x = left + p * (size + gap);
    svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="14" text-anchor="middle" fill="#222">{}</text>)", x + size / 2,
                       top - 12, names[p]) + "\n";
    svg += matrix_panel(p == 0 ? m.decay : m.attention, n, x, top, size, log10_min);
    // Axis labels: token positions of the span's ends.
    svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" fill="#222">{}</text>)", x, top + size + 16, m.begin) + "\n";
    svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" text-anchor="end" fill="#222">{}</text>)", x + size,
                       top + size + 16, m.end - 1) + "\n";
    svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="13" text-anchor="middle" fill="#222">key position j</text>)",
                       x + size / 2, top + size + 36) + "\n";
    svg += fmt::format(R"(<text x="{0:.2f}" y="{1:.2f}" font-size="13" text-anchor="middle" fill="#222" )"
                       R"svg(transform="rotate(-90 {0:.2f} {1:.2f})">query position i</text>)svg",
                       x - 14, top + size / 2) + "\n";
  }
  svg += colour_bar(left + 2 * size + gap + 20, top, size, log10_min, 0.0, "value", decade);
  svg += "</svg>\n";
  return svg;
}

std::string gates_heatmap_svg(const nlohmann::json& result, double tolerance, const std::string& sort, const std::string& title) {
  if (sort != "head" && sort != "reach") throw Error(fmt::format("--sort {}: head or reach", sort));
  const std::string tkey = fmt::format("{}", tolerance);
  const nlohmann::json& layers = result.at("layers");
  if (!layers.is_array() || layers.empty())
    throw Error(fmt::format("plot gates: the result has no layers ({})", result.at("decay").value("what", "no decay")));
  const auto L = static_cast<int64_t>(layers.size());
  const auto Hn = static_cast<int64_t>(layers[0].at("heads").size());
  const double doc_len = std::max(2.0, result.at("tokens").get<double>() / std::max(1.0, result.at("documents").get<double>()));
  const double top_log = std::log2(doc_len);
  // Per layer the heads' median reach (+inf: censored) in drawing order.
  struct Cell {
    int64_t head;
    double reach;
  };
  std::vector<std::vector<Cell>> cols(L);
  for (int64_t l = 0; l < L; ++l) {
    const nlohmann::json& heads = layers[l].at("heads");
    if (static_cast<int64_t>(heads.size()) != Hn) throw Error("plot gates: layers with different head counts");
    for (int64_t h = 0; h < Hn; ++h) {
      const nlohmann::json& r = heads[h].at("reach");
      if (!r.contains(tkey)) throw Error(fmt::format("plot gates: no reach at tolerance {} in the result", tkey));
      const nlohmann::json& med = r[tkey].at("median");
      cols[l].push_back({h, med.is_null() ? INFINITY : med.get<double>()});
    }
    if (sort == "reach")
      std::stable_sort(cols[l].begin(), cols[l].end(), [](const Cell& a, const Cell& b) { return a.reach > b.reach; });
  }
  const double cw = std::clamp(640.0 / L, 14.0, 64.0), ch = std::clamp(480.0 / Hn, 12.0, 40.0);
  const double left = 70;
  // Every label inside the canvas: the canvas grows to the widest label (title, colour bar's caption
  // and ticks, the rotated axis caption), and a cell's label shrinks to its cell or is left out.
  const std::string y_caption = sort == "head" ? "head" : "heads by reach (longest first)";
  const std::string bar_caption = fmt::format("median reach (e^-{})", tkey);
  const double grid_h = ch * Hn;
  const double top = std::max(56.0, 56.0 + (text_width(y_caption, 14) - grid_h) / 2);  // the rotated caption's upper end
  const double H = std::max(top + grid_h + 60, top + grid_h / 2 + text_width(y_caption, 14) / 2 + 8);
  const double bar_x = left + cw * L + 30;
  double widest_tick = 0;
  for (double v = 0; v <= top_log + 1e-9; v += std::max(1.0, std::ceil(top_log / 8.0)))
    widest_tick = std::max(widest_tick, text_width(short_count(std::exp2(v)), 12));
  const double title_w = text_width(title, 16, true);
  const double W = std::max({bar_x - 4 + text_width(bar_caption, 12) + 10, bar_x + 21 + widest_tick + 10, title_w + 20});
  const double title_x = std::clamp(left + cw * L / 2, title_w / 2 + 10, W - title_w / 2 - 10);
  std::vector<std::vector<std::string>> labels(L, std::vector<std::string>(Hn));
  double widest_label = 0;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t r = 0; r < Hn; ++r) {
      const Cell& c = cols[l][r];
      labels[l][r] = std::isinf(c.reach) ? "all" : short_count(c.reach);
      if (sort == "reach") labels[l][r] = fmt::format("h{} {}", c.head, labels[l][r]);
      widest_label = std::max(widest_label, text_width(labels[l][r], 1));
    }
  const double font = std::min({12.0, ch * 0.6, (cw - 4) / widest_label});
  const bool text = font >= 8 && ch >= 12;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" font-family="{2}">)",
      W, H, kFont);
  svg += "\n" + fmt::format(R"(<rect x="0" y="0" width="{:.0f}" height="{:.0f}" fill="#ffffff"/>)", W, H) + "\n";
  svg += fmt::format(R"(<text x="{:.2f}" y="24" font-size="16" font-weight="bold" text-anchor="middle" fill="#222">{}</text>)",
                     title_x, xml_escape(title)) + "\n";
  for (int64_t l = 0; l < L; ++l)
    for (int64_t r = 0; r < Hn; ++r) {
      const Cell& c = cols[l][r];
      const double t = std::isinf(c.reach) ? 1.0 : std::log2(std::max(1.0, c.reach)) / top_log;
      const double x = left + l * cw, y = top + r * ch;
      svg += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}" stroke="#fff" stroke-width="0.5"/>)",
                         x, y, cw, ch, viridis(t)) + "\n";
      if (text)
        svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="{:.1f}" text-anchor="middle" fill="{}">{}</text>)", x + cw / 2,
                           y + ch / 2 + font / 3, font, t > 0.6 ? "#222" : "#fff", labels[l][r]) + "\n";
    }
  svg += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="none" stroke="#333"/>)", left, top, cw * L,
                     ch * Hn) + "\n";
  const int64_t lstep = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(24.0 / cw)));
  for (int64_t l = 0; l < L; l += lstep)
    svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" text-anchor="middle" fill="#222">{}</text>)", left + (l + 0.5) * cw,
                       top + ch * Hn + 16, l) + "\n";
  const int64_t hstep = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(14.0 / ch)));
  if (sort == "head")
    for (int64_t h = 0; h < Hn; h += hstep)
      svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="12" text-anchor="end" fill="#222">{}</text>)", left - 6,
                         top + (h + 0.5) * ch + 4, h) + "\n";
  svg += fmt::format(R"(<text x="{:.2f}" y="{:.2f}" font-size="14" text-anchor="middle" fill="#222">layer</text>)", left + cw * L / 2,
                     top + ch * Hn + 38) + "\n";
  svg += fmt::format(R"(<text x="{0:.2f}" y="{1:.2f}" font-size="14" text-anchor="middle" fill="#222" )"
                     R"svg(transform="rotate(-90 {0:.2f} {1:.2f})">{2}</text>)svg",
                     22.0, top + ch * Hn / 2, y_caption) + "\n";
  svg += colour_bar(bar_x, top, ch * Hn, 0.0, top_log, bar_caption, [](double v) { return short_count(std::exp2(v)); });
  svg += "</svg>\n";
  return svg;
}

void plot_gates_file(const std::string& file, const std::string& out, double tolerance, const std::string& sort,
                     const std::string& title) {
  const nlohmann::json r = read_json(file);
  if (!r.is_object() || r.value("kind", "") != "foxeval-inspect-gates")
    throw Error(fmt::format("{}: not a `foxeval inspect gates` result", file));
  std::string t = title;
  if (t.empty()) {
    std::string model = r.value("model", "");
    while (model.size() > 1 && model.back() == '/') model.pop_back();
    const size_t slash = model.find_last_of('/');
    t = fmt::format("{}: median decay reach, e^-{}", slash == std::string::npos ? model : model.substr(slash + 1), tolerance);
  }
  std::string svg;
  try {
    svg = gates_heatmap_svg(r, tolerance, sort, t);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: a field is missing or of the wrong type ({})", file, e.what()));
  }
  write_text_atomic(out, svg);
}

}  // namespace foxeval::inspect
