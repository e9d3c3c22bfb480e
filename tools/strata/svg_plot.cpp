#include "svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include "metrics_file.hpp"
#include "strata/error.hpp"

namespace strata::cli {
namespace {

// Okabe & Ito's colourblind-safe palette (its yellow, too pale on white, swapped for grey).
constexpr std::array<const char*, 8> kPalette{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                              "#E69F00", "#56B4E9", "#000000", "#999999"};
enum class Marker { circle, square, triangle, diamond };

// Layout, in pixels: two plot areas side by side, the legend underneath.
constexpr double kWidth = 960;
constexpr double kTop = 56;                      // plot areas' top edge
constexpr double kPlotW = 360, kPlotH = 280;     // one plot area
constexpr std::array<double, 2> kLeft{90, 570};  // plot areas' left edges
constexpr double kLegendTop = kTop + kPlotH + 64;
constexpr double kLegendRow = 20;

struct Point {
  double x, y;
};

using Curve = std::vector<Point>;  // one series in one panel, finite points only

Curve finite_points(const std::vector<double>& xs, const std::vector<double>& ys) {
  Curve out;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (std::isfinite(xs[i]) && std::isfinite(ys[i])) out.push_back({xs[i], ys[i]});
  return out;
}

// Min and max of the finite values (NaN, NaN when there are none).
std::pair<double, double> finite_range(const std::vector<Curve>& curves, double Point::*coord) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& c : curves)
    for (const auto& p : c) lo = std::min(lo, p.*coord), hi = std::max(hi, p.*coord);
  if (lo > hi) lo = hi = std::numeric_limits<double>::quiet_NaN();
  return {lo, hi};
}

// Maps data values to pixels within one plot area.
struct Frame {
  double left, top;
  Ticks xt, yt;
  double px(double x) const {
    return left + (x - xt.values.front()) / (xt.values.back() - xt.values.front()) * kPlotW;
  }
  double py(double y) const {
    return top + kPlotH - (y - yt.values.front()) / (yt.values.back() - yt.values.front()) * kPlotH;
  }
};

void marker(std::string& out, Marker m, double x, double y) {
  constexpr double r = 3;
  auto out_it = std::back_inserter(out);
  switch (m) {
    case Marker::circle:
      fmt::format_to(out_it, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>", x, y, r);
      break;
    case Marker::square:
      fmt::format_to(out_it, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\"/>", x - r,
                     y - r, 2 * r, 2 * r);
      break;
    case Marker::triangle:
      fmt::format_to(out_it, "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>", x,
                     y - 1.2 * r, x - 1.1 * r, y + 0.8 * r, x + 1.1 * r, y + 0.8 * r);
      break;
    case Marker::diamond:
      fmt::format_to(
          out_it, "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>",
          x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y);
      break;
  }
  out += '\n';
}

// Series i's colour and marker; past the palette the marker shape changes too.
const char* colour(std::size_t i) {
  return kPalette[i % kPalette.size()];
}
Marker marker_of(std::size_t i) {
  return static_cast<Marker>((i + i / kPalette.size()) % 4);
}

// Grid, axes, tick labels and axis titles of one panel, then its curves.
void panel(std::string& out, const Frame& f, const std::string& x_title, const std::string& y_title,
           const std::vector<Curve>& curves) {
  auto it = std::back_inserter(out);
  const double bottom = f.top + kPlotH, right = f.left + kPlotW;
  out += "<g font-size=\"11\" fill=\"#333\">\n";
  for (const double x : f.xt.values) {
    const double px = f.px(x);
    fmt::format_to(
        it, "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n", px,
        f.top, bottom);
    fmt::format_to(it, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px,
                   bottom + 16, xml_escape(format_tick(x, f.xt.step)));
  }
  for (const double y : f.yt.values) {
    const double py = f.py(y);
    fmt::format_to(
        it, "<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#e4e4e4\"/>\n", py,
        f.left, right);
    fmt::format_to(it, "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", f.left - 6,
                   py + 4, xml_escape(format_tick(y, f.yt.step)));
  }
  fmt::format_to(
      it, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
      f.left, f.top, kPlotW, kPlotH);
  fmt::format_to(it, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                 f.left + kPlotW / 2, bottom + 38, xml_escape(x_title));
  fmt::format_to(it,
                 "<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"13\">{}</text>\n",
                 f.left - 62, f.top + kPlotH / 2, xml_escape(y_title));
  out += "</g>\n";
  bool any = false;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    if (curves[i].empty()) continue;
    any = true;
    fmt::format_to(
        it,
        "<g stroke=\"{0}\" fill=\"{0}\">\n<polyline fill=\"none\" stroke-width=\"1.8\" points=\"",
        colour(i));
    for (const auto& p : curves[i]) fmt::format_to(it, "{:.1f},{:.1f} ", f.px(p.x), f.py(p.y));
    out += "\"/>\n";
    for (const auto& p : curves[i]) marker(out, marker_of(i), f.px(p.x), f.py(p.y));
    out += "</g>\n";
  }
  if (!any)
    fmt::format_to(
        it,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">no finite values</text>\n",
        f.left + kPlotW / 2, f.top + kPlotH / 2);
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f ? '?' : c;
      }
    }
  }
  return out;
}

Ticks nice_ticks(double lo, double hi, int max_intervals, bool integer) {
  // Two at least: lo < 0 < hi needs them. At most 1000 keeps every k * step exact.
  max_intervals = std::clamp(max_intervals, 2, 1000);
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    lo = 0;
    hi = 1;
  }
  constexpr double kHuge = 1e300;  // keeps hi - lo finite
  lo = std::clamp(lo, -kHuge, kHuge), hi = std::clamp(hi, -kHuge, kHuge);
  if (lo > hi) std::swap(lo, hi);
  const double scale = std::max(std::abs(lo), std::abs(hi));
  if (hi - lo <= scale * 1e-12) {  // one value (up to rounding): a range around it
    double pad = scale > 0 ? scale * 0.1 : 1.0;
    if (integer) pad = std::max(pad, 1.0);
    lo -= pad, hi += pad;
  }
  double mag = std::pow(10.0, std::floor(std::log10((hi - lo) / max_intervals)));
  if (integer) mag = std::max(mag, 1.0);
  // At the latest a step of 2 * max(|lo|, |hi|) fits: at most ticks -step, 0, step.
  for (int decade = 0; decade < 700; ++decade, mag *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double step = m * mag, k0 = std::floor(lo / step), k1 = std::ceil(hi / step);
      if (k1 - k0 > max_intervals) continue;
      Ticks t{{}, step};
      for (double k = k0; k <= std::max(k1, k0 + 1); ++k)
        t.values.push_back(k == 0 ? 0.0 : k * step);
      return t;
    }
  }
  return {{lo, hi}, hi - lo};  // not reached
}

std::string format_tick(double value, double step) {
  if (!(step > 0) || !std::isfinite(step)) return fmt::format("{}", value);
  if (std::abs(value) < step * 1e-6) value = 0;  // rounding noise and -0
  const double mag = std::max(std::abs(value), step);
  const int step_exp = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  if (mag >= 1e7 || step < 1e-4) {
    const int digits = static_cast<int>(std::floor(std::log10(mag) + 1e-9)) - step_exp + 1;
    return fmt::format("{:.{}g}", value, std::clamp(digits, 1, 17));
  }
  return fmt::format("{:.{}f}", value, std::max(0, -step_exp));
}

std::string convergence_svg(const std::string& title, const std::string& metric,
                            const std::vector<Series>& series) {
  if (series.empty())
    throw OptionError(
        fmt::format("plot of '{}': no series to plot (give at least one run)", metric));
  for (const auto& s : series)
    if (s.pass.size() != s.value.size() || s.seconds.size() != s.value.size())
      throw ShapeError(
          fmt::format("plot series '{}': pass, seconds and value have {}, {} and {} entries",
                      s.label, s.pass.size(), s.seconds.size(), s.value.size()));

  std::vector<Curve> by_pass, by_time;
  for (const auto& s : series) {
    by_pass.push_back(finite_points(s.pass, s.value));
    by_time.push_back(finite_points(s.seconds, s.value));
  }
  // Both panels share the y axis; the time axis starts at zero (unless times are negative).
  auto [ylo, yhi] = finite_range(by_pass, &Point::y);
  const auto [tylo, tyhi] = finite_range(by_time, &Point::y);
  ylo = std::isnan(ylo) ? tylo : std::isnan(tylo) ? ylo : std::min(ylo, tylo);
  yhi = std::isnan(yhi) ? tyhi : std::isnan(tyhi) ? yhi : std::max(yhi, tyhi);
  const Ticks yt = nice_ticks(ylo, yhi);
  const auto [plo, phi] = finite_range(by_pass, &Point::x);
  auto [tlo, thi] = finite_range(by_time, &Point::x);
  if (tlo >= 0) tlo = 0;

  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.label.size());
  const std::size_t columns = longest > 60 ? 1 : 2;
  const std::size_t legend_rows = (series.size() + columns - 1) / columns;
  const double height = kLegendTop + static_cast<double>(legend_rows) * kLegendRow + 12;

  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" "
                 "font-family=\"Helvetica, Arial, sans-serif\">\n",
                 kWidth, height);
  fmt::format_to(it, "<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                 xml_escape(title));
  fmt::format_to(it,
                 "<text x=\"{}\" y=\"30\" text-anchor=\"middle\" font-size=\"16\" "
                 "font-weight=\"bold\">{}</text>\n",
                 kWidth / 2, xml_escape(title));
  panel(out, Frame{kLeft[0], kTop, nice_ticks(plo, phi, 6, true), yt}, "pass", metric, by_pass);
  panel(out, Frame{kLeft[1], kTop, nice_ticks(tlo, thi), yt}, "elapsed training time (s)", metric,
        by_time);

  // Legend, filled column by column: a short line with the series' marker, then its label.
  out += "<g font-size=\"12\">\n";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double x = kLeft[0] + static_cast<double>(i / legend_rows) * (kLeft[1] - kLeft[0]);
    const double y = kLegendTop + static_cast<double>(i % legend_rows) * kLegendRow;
    fmt::format_to(
        it,
        "<g stroke=\"{0}\" fill=\"{0}\"><line x1=\"{1}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" "
        "stroke-width=\"1.8\"/>",
        colour(i), x, y, x + 28);
    marker(out, marker_of(i), x + 14, y);
    fmt::format_to(it, "</g><text x=\"{}\" y=\"{}\">{}</text>\n", x + 36, y + 4,
                   xml_escape(series[i].label));
  }
  out += "</g>\n</svg>\n";
  return out;
}

void write_convergence_svg(const std::string& path, const std::string& title,
                           const std::string& metric, const std::vector<Series>& series) {
  write_file_atomically(path, convergence_svg(title, metric, series));
}

}  // namespace strata::cli
