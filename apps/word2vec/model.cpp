#include "word2vec/model.hpp"

namespace strata::apps::word2vec {

Noise::Noise(const std::vector<std::int64_t>& counts, double power) : prob_(counts.size(), 1.0), alias_(counts.size()) {
  const std::size_t n = counts.size();
  std::vector<double> scaled(n);
  double total = 0;
  for (std::size_t w = 0; w < n; ++w) total += scaled[w] = std::pow(static_cast<double>(counts[w]), power);
  std::vector<std::int32_t> small, large;
  for (std::size_t w = 0; w < n; ++w) {
    scaled[w] *= static_cast<double>(n) / total;
    alias_[w] = static_cast<std::int32_t>(w);
    (scaled[w] < 1 ? small : large).push_back(static_cast<std::int32_t>(w));
  }
  // Vose: each entry below 1 is topped up from one above it, which then takes the rest.
  while (!small.empty() && !large.empty()) {
    const auto s = static_cast<std::size_t>(small.back()), l = static_cast<std::size_t>(large.back());
    small.pop_back();
    prob_[s] = scaled[s];
    alias_[s] = static_cast<std::int32_t>(l);
    scaled[l] -= 1 - scaled[s];
    if (scaled[l] < 1) {
      large.pop_back();
      small.push_back(static_cast<std::int32_t>(l));
    }
  }
  // Entries left on either list are 1 up to rounding: they always stand for themselves.
}

std::vector<float> keep_chances(const std::vector<std::int64_t>& counts, double subsample) {
  std::vector<float> chance(counts.size(), 1.0f);
  if (subsample <= 0) return chance;
  double total = 0;
  for (const auto c : counts) total += static_cast<double>(c);
  for (std::size_t w = 0; w < counts.size(); ++w) {
    const double r = subsample * total / static_cast<double>(counts[w]);  // t / f
    chance[w] = static_cast<float>(std::min(1.0, std::sqrt(r) + r));
  }
  return chance;
}

}  // namespace strata::apps::word2vec
