// The process's resident set as /proc/self/status reports it, for tests that bound
// what a call holds: the peak since the last reset, less the resident set before.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace strata::testing {

/// Kilobytes of the status line `name` (VmRSS, VmHWM); -1 when it is missing.
inline std::int64_t status_kib(const std::string& name) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(name + ":", 0) == 0) return std::stoll(line.substr(name.size() + 1));
  return -1;
}

/// The peak (VmHWM) starts again from the resident set now.
inline void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace strata::testing
