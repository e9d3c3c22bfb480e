// Training progress for people: on a terminal a bar redrawn after every pass (rate
// and ETA), otherwise one plain line per pass; and the end-of-run table.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "common/app.hpp"

namespace strata::cli {

class Progress {
 public:
  /// `out` is a terminal: draw a bar in place; otherwise print lines.
  Progress(std::FILE* out, bool terminal, int epochs, std::string unit);
  void update(const apps::PassReport& r);
  /// Ends the bar's line.
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  int epochs_;
  std::string unit_;
  double elapsed_ = 0;
};

/// "1.23 M" style: the value scaled to k, M or G.
std::string human(double v);
/// "1:05" or "42 s".
std::string duration(double seconds);

/// The table printed at the end: per pass its metrics, time and throughput.
std::string pass_table(const std::vector<apps::PassReport>& passes, const std::string& unit);

}  // namespace strata::cli
