#include "mlr/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "common/libsvm_line.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"
#include "strata/random.hpp"

namespace strata::apps::mlr {

namespace {

double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

bool held_out(std::int64_t i, double holdout, std::uint64_t seed) {
  return unit(mix64(seed ^ mix64(static_cast<std::uint64_t>(i) + 0x484F4C44ULL))) < holdout;
}

// A log-uniform draw from [0, n): value v with probability about 1 / (v + 1).
std::int64_t log_uniform(std::uint64_t bits, std::int64_t n) {
  const double u = unit(bits);
  return std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(std::exp(u * std::log(static_cast<double>(n) + 1))) - 1);
}

// Renumbers the samples' classes from labels `from` to their places in `to`.
void renumber(std::vector<Sample>& samples, const std::vector<float>& from, const std::vector<float>& to) {
  for (Sample& s : samples) {
    const float label = from[static_cast<std::size_t>(s.label)];
    s.label = static_cast<std::int32_t>(std::lower_bound(to.begin(), to.end(), label) - to.begin());
  }
}

}  // namespace

Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed) {
  Problem p;
  p.features = spec.features;
  p.classes = spec.classes;
  for (std::int32_t c = 0; c < spec.classes; ++c) p.class_label.push_back(static_cast<float>(c));
  const std::int64_t own = std::max<std::int64_t>(1, spec.features / spec.classes);  // features of a class
  for (std::int64_t i = 0; i < spec.samples; ++i) {
    const std::uint64_t h = mix64(seed + 0x9E37 * static_cast<std::uint64_t>(i));
    const auto y = static_cast<std::int32_t>(mix64(h ^ 0xC1A55) % static_cast<std::uint64_t>(spec.classes));
    const int z = std::max(1, spec.nnz - 5 + static_cast<int>(h % 11));
    Sample s{static_cast<std::int64_t>(p.feature.size()), z, y};
    for (int k = 0; k < z; ++k) {
      const std::uint64_t draw = mix64(h + static_cast<std::uint64_t>(k) * 0x51ED);
      std::int64_t f;
      if (unit(mix64(draw ^ 0x5164)) < spec.signal)
        f = std::min(spec.features - 1, y + spec.classes * log_uniform(draw, own));
      else
        f = log_uniform(draw, spec.features);
      p.feature.push_back(static_cast<std::int32_t>(f));
      p.value.push_back(1.0f);
    }
    if (unit(mix64(h ^ 0x4015E)) < spec.noise)
      s.label = static_cast<std::int32_t>(mix64(h ^ 0x7AB) % static_cast<std::uint64_t>(spec.classes));
    (held_out(i, holdout, seed) ? p.test : p.train).push_back(s);
  }
  p.source = fmt::format("synthetic: {} samples, {} features, {} classes, about {} non-zeros each", spec.samples,
                         spec.features, spec.classes, spec.nnz);
  return p;
}

Problem load_libsvm(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed,
                    std::int32_t max_classes) {
  LoadReport report;
  LibsvmRows rows = load_libsvm_rows(rt, path, {}, &report, LibsvmLabels::any);
  if (rows.samples() == 0) throw ParseError(path, report.lines, "", "the file holds no samples");
  Problem p;
  p.class_label = rows.labels;
  std::sort(p.class_label.begin(), p.class_label.end());
  p.class_label.erase(std::unique(p.class_label.begin(), p.class_label.end()), p.class_label.end());
  if (p.class_label.size() > static_cast<std::size_t>(max_classes))
    throw ParseError(path, report.lines, "",
                     fmt::format("{} distinct labels, more than the {} classes mlr takes (is this a regression file?)",
                                 p.class_label.size(), max_classes));
  p.classes = static_cast<std::int32_t>(p.class_label.size());
  p.features = rows.feature_count;
  for (std::int64_t i = 0; i < rows.samples(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    const auto label = static_cast<std::int32_t>(
        std::lower_bound(p.class_label.begin(), p.class_label.end(), rows.labels[u]) - p.class_label.begin());
    const Sample s{rows.offsets[u], static_cast<std::int32_t>(rows.offsets[u + 1] - rows.offsets[u]), label};
    (held_out(i, holdout, seed) ? p.test : p.train).push_back(s);
  }
  p.feature = std::move(rows.features);
  p.value = std::move(rows.values);
  p.source = fmt::format("{}: {} samples, {} features, {} classes", path, rows.samples(), p.features, p.classes);
  return p;
}

void attach_test(Problem& p, const Problem& test, const std::string& path) {
  std::vector<float> classes = p.class_label;
  classes.insert(classes.end(), test.class_label.begin(), test.class_label.end());
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  renumber(p.train, p.class_label, classes);
  const auto offset = static_cast<std::int64_t>(p.feature.size());
  p.feature.insert(p.feature.end(), test.feature.begin(), test.feature.end());
  p.value.insert(p.value.end(), test.value.begin(), test.value.end());
  p.test.clear();
  for (Sample s : test.train) {
    s.begin += offset;
    p.test.push_back(s);
  }
  renumber(p.test, test.class_label, classes);
  const std::size_t unseen = classes.size() - p.class_label.size();
  p.class_label = std::move(classes);
  p.classes = static_cast<std::int32_t>(p.class_label.size());
  p.features = std::max(p.features, test.features);
  p.source += fmt::format("; --test {}: {} samples", path, p.test.size());
  if (unseen) p.source += fmt::format(" ({} classes only there)", unseen);
}

void write_libsvm(const Problem& p, const std::vector<Sample>& samples, const std::string& path) {
  write_libsvm_samples(path, samples, p.feature, p.value,
                       [&](const Sample& s) -> std::string {
                         return fmt::format("{}", p.class_label[static_cast<std::size_t>(s.label)]);
                       });
}

}  // namespace strata::apps::mlr
