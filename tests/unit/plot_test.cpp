// The `strata` command's convergence plots (SVG): ticks, escaping, panels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "strata/error.hpp"
#include "svg_plot.hpp"
#include "temp_dir_fixture.hpp"

namespace strata::cli {
namespace {

using SvgPlot = TempDir;

bool is_125_step(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  for (const double m : {1.0, 2.0, 5.0})
    if (std::abs(mantissa - m) < 1e-9) return true;
  return false;
}

void expect_good_ticks(double lo, double hi, int max_intervals, bool integer) {
  SCOPED_TRACE(::testing::Message()
               << "[" << lo << ", " << hi << "] max " << max_intervals << " int " << integer);
  const auto t = nice_ticks(lo, hi, max_intervals, integer);
  ASSERT_GE(t.values.size(), 2u);
  EXPECT_LE(t.values.size(), static_cast<std::size_t>(std::max(max_intervals, 2) + 1));
  EXPECT_TRUE(is_125_step(t.step)) << t.step;
  if (integer) {
    EXPECT_GE(t.step, 1.0);
  }
  EXPECT_LE(t.values.front(), std::min(lo, hi));
  EXPECT_GE(t.values.back(), std::max(lo, hi));
  if (lo == hi) {
    EXPECT_LT(t.values.front(), t.values.back());
  }
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    // Far from zero, doubles hold the ticks only to about |value| * 1e-16.
    const double k = t.values[i] / t.step;
    EXPECT_NEAR(k, std::round(k), std::max(1e-6, std::abs(k) * 1e-15)) << t.values[i];
    if (i > 0) {
      EXPECT_NEAR(t.values[i] - t.values[i - 1], t.step,
                  std::max(t.step * 1e-6, std::abs(t.values[i]) * 1e-15));
    }
  }
  // The smallest such step: the next smaller 1-2-5 step needs too many intervals.
  if (t.step > (integer ? 1.0 : 0.0) && lo != hi) {
    const double mantissa =
        std::round(t.step / std::pow(10.0, std::floor(std::log10(t.step) + 1e-9)));
    const double smaller = mantissa == 1 ? t.step / 2 : mantissa == 2 ? t.step / 2 : t.step * 2 / 5;
    if (!integer || smaller >= 1) {
      EXPECT_GT(std::ceil(std::max(lo, hi) / smaller) - std::floor(std::min(lo, hi) / smaller),
                std::max(max_intervals, 2))
          << "step " << t.step << " could be " << smaller;
    }
  }
}

TEST(Ticks, OneTwoFiveStepsCoveringTheRange) {
  const double ranges[][2] = {
      {0, 1},         {0, 10.3},        {0.13, 0.87}, {-3.7, 12.2}, {1, 100},     {0.5, 0.5000001},
      {1e-7, 3e-7},   {123456, 123789}, {-5e9, -1e9}, {0.9, 1.1},   {7, 3},       {-0.001, 0.001},
      {1e290, 1e299}, {2.5, 2.5},       {0, 0},       {-4, -4},     {1, 1000000}, {0.0123, 0.0987}};
  for (const auto& r : ranges)
    for (const int max_intervals : {1, 2, 4, 6, 10})
      for (const bool integer : {false, true})
        expect_good_ticks(r[0], r[1], max_intervals, integer);
  // Pseudo-random ranges.
  std::uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(x >> 11) / 9007199254740992.0;  // [0, 1)
  };
  for (int i = 0; i < 2000; ++i) {
    const double centre = (next() - 0.5) * std::pow(10.0, next() * 12 - 6);
    const double width = std::pow(10.0, next() * 10 - 5);
    expect_good_ticks(centre, centre + width, 3 + static_cast<int>(next() * 6), next() < 0.3);
  }
}

TEST(Ticks, ExpectedValues) {
  auto t = nice_ticks(0, 10.3);
  EXPECT_EQ(t.step, 2);
  EXPECT_EQ(t.values, (std::vector<double>{0, 2, 4, 6, 8, 10, 12}));
  t = nice_ticks(0.13, 0.87);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  ASSERT_EQ(t.values.size(), 6u);
  EXPECT_EQ(t.values.front(), 0);
  EXPECT_DOUBLE_EQ(t.values.back(), 1.0);
  t = nice_ticks(1, 3, 6, true);
  EXPECT_EQ(t.values, (std::vector<double>{1, 2, 3}));
  t = nice_ticks(1, 1, 6, true);  // a single pass
  EXPECT_EQ(t.values, (std::vector<double>{0, 1, 2}));
  t = nice_ticks(kNaN, kInf);
  EXPECT_EQ(t.values.front(), 0);
  EXPECT_EQ(t.values.back(), 1);
  t = nice_ticks(-1, 1);
  EXPECT_EQ(t.step, 0.5);
  EXPECT_FALSE(std::signbit(t.values[2])) << "zero tick is +0";
}

TEST(Ticks, LabelsWithoutRoundingNoise) {
  EXPECT_EQ(format_tick(3 * 0.1, 0.1), "0.3");
  EXPECT_EQ(format_tick(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(format_tick(0.05, 0.05), "0.05");
  EXPECT_EQ(format_tick(10, 5), "10");
  EXPECT_EQ(format_tick(1500, 500), "1500");
  EXPECT_EQ(format_tick(-0.0, 1), "0");
  EXPECT_EQ(format_tick(1e-17, 0.1), "0.0");  // like its neighbours 0.1, 0.2
  EXPECT_EQ(format_tick(-2.5, 0.5), "-2.5");
  EXPECT_EQ(format_tick(2e-5, 1e-5), "2e-05");
  EXPECT_EQ(format_tick(1.2e-4, 2e-5), "0.00012");
  EXPECT_EQ(format_tick(2e7, 1e7), "2e+07");
  EXPECT_EQ(format_tick(12340000, 20000), "1.234e+07");
}

TEST(Xml, EscapesMarkupAndControlCharacters) {
  EXPECT_EQ(xml_escape("a<b & 'c' \"d\" >"), "a&lt;b &amp; &apos;c&apos; &quot;d&quot; &gt;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\x7f", 6)), "x?y\tz?");
  EXPECT_EQ(xml_escape("h\xc3\xa9"), "h\xc3\xa9");  // UTF-8 kept
}

// ---- the SVG document ----

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// The points of every polyline, in document order.
std::vector<std::vector<std::pair<double, double>>> polylines(const std::string& svg) {
  std::vector<std::vector<std::pair<double, double>>> out;
  const std::string key = "<polyline";
  for (auto at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const auto begin = svg.find("points=\"", at) + 8;
    std::istringstream in(svg.substr(begin, svg.find('"', begin) - begin));
    out.emplace_back();
    double x = 0, y = 0;
    char comma = 0;
    while (in >> x >> comma >> y) out.back().emplace_back(x, y);
  }
  return out;
}

void expect_well_formed(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "nan"), 0u);
  EXPECT_EQ(count(svg, "inf"), 0u);
  // Every plotted point lies inside one of the two plot areas.
  for (const auto& line : polylines(svg))
    for (const auto& [x, y] : line) {
      EXPECT_TRUE((x >= 89.9 && x <= 450.1) || (x >= 569.9 && x <= 930.1)) << x;
      EXPECT_TRUE(y >= 55.9 && y <= 336.1) << y;
    }
}

std::vector<Series> three_runs() {
  std::vector<Series> s;
  for (int r = 0; r < 3; ++r) {
    Series one;
    one.label = r == 0 ? "serial <np=1> & co" : "strata np=" + std::to_string(2 * r);
    double elapsed = 0;
    for (int p = 1; p <= 10; ++p) {
      elapsed += 0.7 / (r + 1);
      one.pass.push_back(p);
      one.seconds.push_back(elapsed);
      one.value.push_back(1.0 + 1.0 / (p + r));
    }
    s.push_back(one);
  }
  return s;
}

TEST_F(SvgPlot, TwoPanelsWithAPolylinePerSeriesAndALegend) {
  const auto series = three_runs();
  const auto svg = convergence_svg("mf: loss <by run>", "training RMSE", series);
  expect_well_formed(svg);
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 6u);  // 3 series x 2 panels
  for (const auto& l : lines) EXPECT_EQ(l.size(), 10u);
  EXPECT_NE(svg.find(">serial &lt;np=1&gt; &amp; co<"), std::string::npos);
  EXPECT_EQ(svg.find("<np=1>"), std::string::npos);
  EXPECT_NE(svg.find(">strata np=2<"), std::string::npos);
  EXPECT_NE(svg.find(">strata np=4<"), std::string::npos);
  EXPECT_NE(svg.find("mf: loss &lt;by run&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">pass<"), std::string::npos);
  EXPECT_NE(svg.find(">elapsed training time (s)<"), std::string::npos);
  EXPECT_EQ(count(svg, ">training RMSE<"), 2u);  // y axis titles
  // Distinct colours.
  EXPECT_NE(svg.find("#0072B2"), std::string::npos);
  EXPECT_NE(svg.find("#D55E00"), std::string::npos);
  EXPECT_NE(svg.find("#009E73"), std::string::npos);
  // Tick labels of the pass axis: 1-2-5 steps, so 2, 4, ..., 10.
  EXPECT_NE(svg.find(">10</text>"), std::string::npos);

  write_convergence_svg(path("plot.svg"), "mf: loss <by run>", "training RMSE", series);
  EXPECT_EQ(slurp(path("plot.svg")), svg);
  EXPECT_FALSE(fs::exists(path("plot.svg.tmp")));
}

TEST_F(SvgPlot, EdgeCases) {
  Series single{"one point", {1}, {0.5}, {0.25}};
  Series flat{"flat", {1, 2, 3}, {1, 2, 3}, {2, 2, 2}};
  Series holes{"holes", {1, 2, 3, 4, 5}, {1, kNaN, 3, 4, 5}, {1, kInf, 0.5, kNaN, 0.25}};
  Series nothing{"no values", {1, 2}, {1, 2}, {kNaN, kNaN}};
  Series empty{"empty", {}, {}, {}};

  auto svg = convergence_svg("t", "m", {single});
  expect_well_formed(svg);
  EXPECT_EQ(polylines(svg).size(), 2u);

  svg = convergence_svg("t", "m", {flat});
  expect_well_formed(svg);
  for (const auto& l : polylines(svg)) {
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(l[0].second, l[2].second);
  }

  svg = convergence_svg("t", "m", {holes, nothing, empty});
  expect_well_formed(svg);
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 2u);                            // only `holes` has finite points
  EXPECT_EQ(lines[0].size(), 3u);                         // passes 1, 3, 5
  EXPECT_EQ(lines[1].size(), 3u);                         // seconds 1, 3, 5
  EXPECT_NE(svg.find(">no values<"), std::string::npos);  // still in the legend
  EXPECT_NE(svg.find(">empty<"), std::string::npos);

  svg = convergence_svg("t", "m", {nothing, empty});
  expect_well_formed(svg);
  EXPECT_EQ(count(svg, "no finite values"), 2u);

  // More series than colours: every one gets a polyline per panel and a legend entry.
  std::vector<Series> many;
  for (int i = 0; i < 11; ++i)
    many.push_back({"run " + std::to_string(i), {1, 2}, {1, 2}, {1.0 * i, 2.0}});
  many[3].label = std::string(80, 'x');  // one long label: a one-column legend
  svg = convergence_svg("t", "m", many);
  expect_well_formed(svg);
  EXPECT_EQ(polylines(svg).size(), 22u);
}

TEST_F(SvgPlot, Errors) {
  try {
    convergence_svg("t", "loss", {});
    FAIL() << "no error";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("no series"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_convergence_svg(path("p.svg"), "t", "loss", {}), OptionError);
  EXPECT_FALSE(fs::exists(path("p.svg")));
  EXPECT_THROW(convergence_svg("t", "loss", {Series{"bad", {1, 2}, {1}, {1, 2}}}), ShapeError);
  const auto p = path("missing/p.svg");
  try {
    write_convergence_svg(p, "t", "loss", three_runs());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::cli
