#include "slr/problem.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "strata/error.hpp"
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

Problem load_libsvm(const std::string& path, double holdout, std::uint64_t seed) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("cannot open LIBSVM file '{}'", path));
  Problem p;
  std::string line;
  std::int64_t line_no = 0, index = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string label;
    if (!(words >> label)) continue;
    Sample s{static_cast<std::int64_t>(p.feature.size()), 0, 0};
    if (label == "1" || label == "+1") s.label = 1;
    else if (label == "-1" || label == "0") s.label = 0;
    else throw ParseError(path, line_no, line, "the label must be +1, 1, -1 or 0");
    std::string pair;
    std::int64_t previous = 0;
    while (words >> pair) {
      long long f = 0;
      double v = 0;
      int used = 0;
      if (std::sscanf(pair.c_str(), "%lld:%lf%n", &f, &v, &used) != 2 || used != static_cast<int>(pair.size()) ||
          f < 1 || f > INT32_MAX || !std::isfinite(v))
        throw ParseError(path, line_no, line, fmt::format("'{}' is not index:value with a 1-based index", pair));
      if (f <= previous) throw ParseError(path, line_no, line, "feature indices must increase within a line");
      previous = f;
      p.feature.push_back(static_cast<std::int32_t>(f - 1));
      p.value.push_back(static_cast<float>(v));
      p.features = std::max<std::int64_t>(p.features, f);
      ++s.nnz;
    }
    (held_out(index++, holdout, seed) ? p.test : p.train).push_back(s);
  }
  if (in.bad()) throw IoError(fmt::format("error reading '{}'", path));
  if (index == 0) throw ParseError(path, line_no, "", "the file holds no samples");
  p.source = fmt::format("{}: {} samples, {} features", path, index, p.features);
  return p;
}

}  // namespace strata::apps::slr
