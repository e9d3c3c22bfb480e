// Elapsed wall-clock seconds, for the timings loaders and loops report.
#pragma once

#include <chrono>

namespace strata::detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace strata::detail
