// Helpers shared by the benchmarks: medians and a one-line machine description.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace strata::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
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
