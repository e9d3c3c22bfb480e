#include "slr/problem.hpp"

#include <cmath>

#include <fmt/format.h>

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
  // Feature ids are 1-based and held as 32-bit integers: at most 2^31 - 1.
  LoadReport report;
  const LibsvmData data =
      strata::load_libsvm(rt, path, {}, std::int64_t{INT32_MAX}, &report, LibsvmLabels::binary);
  const std::int64_t samples = data.labels.extent(0);
  if (samples == 0) throw ParseError(path, report.lines, "", "the file holds no samples");
  const std::vector<float> labels = data.labels.gather();
  const auto entries = data.features.gather_entries();  // by sample, then feature: file order
  Problem p;
  p.feature.reserve(entries.size());
  p.value.reserve(entries.size());
  std::size_t k = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    Sample s{static_cast<std::int64_t>(p.feature.size()), 0, labels[static_cast<std::size_t>(i)] > 0 ? 1.0f : 0.0f};
    for (; k < entries.size() && entries[k].index[0] == i; ++k, ++s.nnz) {
      p.feature.push_back(static_cast<std::int32_t>(entries[k].index[1]));
      p.value.push_back(entries[k].value);
      p.features = std::max(p.features, entries[k].index[1] + 1);
    }
    (held_out(i, holdout, seed) ? p.test : p.train).push_back(s);
  }
  p.source = fmt::format("{}: {} samples, {} features", path, samples, p.features);
  return p;
}

}  // namespace strata::apps::slr
