// The features of one LIBSVM line as liblinear reads them: ids 1-based and
// increasing, a feature a sample holds twice written once with the values summed.
// Shared by the apps that write their samples out (slr, mlr).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace strata::apps {

/// Appends " id:value" for each of `row`'s (0-based feature, value) pairs, sorted by
/// feature and merged; `row` is sorted in place.
inline void append_libsvm_features(std::string& line, std::vector<std::pair<std::int32_t, float>>& row) {
  std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < row.size(); ++k) {
    float v = row[k].second;
    while (k + 1 < row.size() && row[k + 1].first == row[k].first) v += row[++k].second;
    fmt::format_to(std::back_inserter(line), " {}:{}", row[k].first + 1, v);
  }
}

}  // namespace strata::apps
