// The features of one LIBSVM line as liblinear reads them: ids 1-based and
// increasing, a feature a sample holds twice written once with the values summed.
// Shared by the apps that write their samples out (slr, mlr).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "strata/error.hpp"

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

/// Writes `samples` (each with begin and nnz into `feature` and `value`) as LIBSVM
/// lines, each starting with label(sample). IoError naming the path.
template <class Sample, class Label>
void write_libsvm_samples(const std::string& path, const std::vector<Sample>& samples,
                          const std::vector<std::int32_t>& feature, const std::vector<float>& value, Label&& label) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw IoError(fmt::format("cannot write '{}'", path));
  std::vector<std::pair<std::int32_t, float>> row;
  std::string line;
  for (const Sample& s : samples) {
    row.clear();
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      row.emplace_back(feature[static_cast<std::size_t>(k)], value[static_cast<std::size_t>(k)]);
    line = label(s);
    append_libsvm_features(line, row);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out);
  }
  if (std::fclose(out) != 0) throw IoError(fmt::format("error writing '{}'", path));
}

}  // namespace strata::apps
