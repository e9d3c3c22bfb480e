#include "slr/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include <fmt/format.h>

#include "common/libsvm_line.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"
#include "strata/random.hpp"

namespace strata::apps::slr {

namespace {

double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

bool held_out(std::int64_t i, double holdout, std::uint64_t seed) {
  return unit(mix64(seed ^ mix64(static_cast<std::uint64_t>(i) + 0x484F4C44ULL))) < holdout;
}

}  // namespace

Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed) {
  Problem p;
  p.features = spec.features;
  const double log_f = std::log(static_cast<double>(spec.features) + 1);
  const CounterRng weights(seed, 21);
  for (std::int64_t i = 0; i < spec.samples; ++i) {
    const std::uint64_t h = mix64(seed + 0x9E37 * static_cast<std::uint64_t>(i));
    const int z = std::max(1, spec.nnz - 10 + static_cast<int>(h % 21));
    Sample s{static_cast<std::int64_t>(p.feature.size()), z, 0};
    double margin = 0;
    for (int k = 0; k < z; ++k) {
      const double u = unit(mix64(h + static_cast<std::uint64_t>(k) * 0x51ED));
      const auto f = std::min<std::int64_t>(spec.features - 1, static_cast<std::int64_t>(std::exp(u * log_f)) - 1);
      p.feature.push_back(static_cast<std::int32_t>(f));
      p.value.push_back(1.0f);
      margin += weights.normal(static_cast<std::uint64_t>(f));
    }
    margin /= std::sqrt(static_cast<double>(z));
    s.label = unit(mix64(h ^ 0xABCDEF)) < 1 / (1 + std::exp(-margin)) ? 1.0f : 0.0f;
    (held_out(i, holdout, seed) ? p.test : p.train).push_back(s);
  }
  p.source = fmt::format("synthetic: {} samples, {} features, about {} non-zeros each", spec.samples, spec.features,
                         spec.nnz);
  return p;
}

Problem load_libsvm(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed) {
  // The library's CSR loader: every rank and thread parses a part, 8 bytes a non-zero,
  // and the arrays become the problem's as they are (no second copy).
  LoadReport report;
  LibsvmRows rows = load_libsvm_rows(rt, path, {}, &report, LibsvmLabels::binary);
  if (rows.samples() == 0) throw ParseError(path, report.lines, "", "the file holds no samples");
  Problem p;
  p.features = rows.feature_count;
  for (std::int64_t i = 0; i < rows.samples(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Sample s{rows.offsets[u], static_cast<std::int32_t>(rows.offsets[u + 1] - rows.offsets[u]),
                   rows.labels[u] > 0 ? 1.0f : 0.0f};
    (held_out(i, holdout, seed) ? p.test : p.train).push_back(s);
  }
  const bool zero_labels = std::any_of(rows.labels.begin(), rows.labels.end(), [](float l) { return l == 0.0f; });
  const bool minus_labels = std::any_of(rows.labels.begin(), rows.labels.end(), [](float l) { return l < 0.0f; });
  if (zero_labels && !minus_labels) p.negative_label = "0";
  p.feature = std::move(rows.features);
  p.value = std::move(rows.values);
  p.source = fmt::format("{}: {} samples, {} features", path, rows.samples(), p.features);
  return p;
}

void attach_test(Problem& p, const Problem& test, const std::string& path) {
  const auto offset = static_cast<std::int64_t>(p.feature.size());
  p.feature.insert(p.feature.end(), test.feature.begin(), test.feature.end());
  p.value.insert(p.value.end(), test.value.begin(), test.value.end());
  p.test.clear();
  for (Sample s : test.train) {
    s.begin += offset;
    p.test.push_back(s);
  }
  p.features = std::max(p.features, test.features);
  p.source += fmt::format("; --test {}: {} samples", path, p.test.size());
}

void write_libsvm(const Problem& p, const std::vector<Sample>& samples, const std::string& path) {
  write_libsvm_samples(path, samples, p.feature, p.value,
                       [&](const Sample& s) -> std::string { return s.label > 0.5f ? "+1" : "-1"; });
}

}  // namespace strata::apps::slr
