// Helpers shared by the benchmarks: medians and a one-line machine description.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "strata/error.hpp"

namespace strata::bench {

/// A benchmark option's value: a non-negative integer, or an OptionError naming the option.
inline std::int64_t number(const std::string& option, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (!text[0] || *end || v < 0)
    throw strata::OptionError(option + " needs a non-negative integer, not '" + text + "'");
  return v;
}

/// Calls f(option, value) for each "--option value" pair of the command line, in
/// order; an option without a value is an OptionError naming it.
template <class F>
void for_each_option(int argc, char** argv, F&& f) {
  for (int a = 1; a < argc; a += 2) {
    const std::string option = argv[a];
    if (a + 1 >= argc) throw strata::OptionError(option + " needs a value");
    f(option, argv[a + 1]);
  }
}

/// Seconds f takes, by the steady clock.
inline double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

/// The per-pass table: "pass  strata <metric>  serial <metric>" (the serial column
/// only when `twin` has values).
inline void print_pass_table(const std::string& metric, const std::vector<double>& strata,
                             const std::vector<double>& twin) {
  const int width = static_cast<int>(metric.size()) + 7;
  std::printf("pass  strata %s%s\n", metric.c_str(), twin.empty() ? "" : ("  serial " + metric).c_str());
  for (std::size_t p = 0; p < strata.size(); ++p) {
    std::printf("%4zu  %*.6f", p + 1, width, strata[p]);
    if (p < twin.size()) std::printf("  %*.6f", width, twin[p]);
    std::printf("\n");
  }
}

/// "Intel(R) Xeon(R) ... , 2 cores" from /proc/cpuinfo.
inline std::string machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

}  // namespace strata::bench
