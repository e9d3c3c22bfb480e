// Convergence plots as standalone SVG files: one metric of one or more runs, against
// the pass (left panel) and against the elapsed training time (right panel), with
// 1-2-5 ticks, grid lines, axis titles and a legend. Needs nothing but fmt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::cli {

/// One run's curve. pass, seconds and value have one entry per point; `seconds` is
/// the elapsed (cumulative) training time at that point. Points with a NaN or
/// infinite coordinate are left out of a panel (the line joins its neighbours).
struct Series {
  std::string label;
  std::vector<double> pass, seconds, value;
};

/// Writes the plot to `path` atomically (see write_file_atomically). OptionError
/// when `series` is empty, ShapeError when a series' vectors differ in length,
/// IoError when the file cannot be written.
void write_convergence_svg(const std::string& path, const std::string& title,
                           const std::string& metric, const std::vector<Series>& series);

/// The SVG document write_convergence_svg writes (same errors, bar IoError).
std::string convergence_svg(const std::string& title, const std::string& metric,
                            const std::vector<Series>& series);

/// Axis ticks: consecutive multiples of `step` (1, 2 or 5 times a power of ten) from
/// at or below `lo` to at or above `hi`; at least 2 and at most max_intervals + 1
/// of them (max_intervals is clamped to [2, 1000]), with the smallest step that
/// allows it. An empty range (lo == hi) is widened around its value; non-finite
/// bounds give [0, 1]. `integer` keeps the step at 1 or more.
struct Ticks {
  std::vector<double> values;
  double step = 1;
};
Ticks nice_ticks(double lo, double hi, int max_intervals = 6, bool integer = false);

/// A tick's label: as many decimals as `step` needs and no rounding noise
/// ("0.3", not "0.30000000000000004"); exponent notation for very large or small steps.
std::string format_tick(double value, double step);

/// Text for XML content or attributes: & < > " ' escaped, control characters
/// (which XML 1.0 cannot hold) replaced by '?'.
std::string xml_escape(std::string_view text);

}  // namespace strata::cli
