#include "word2vec/model.hpp"

#include "common/alias_pairing.hpp"

namespace strata::apps::word2vec {

Noise::Noise(const std::vector<std::int64_t>& counts, double power) : prob_(counts.size()), alias_(counts.size()) {
  const std::size_t n = counts.size();
  AliasPairing pairing;
  const std::span<double> scaled = pairing.scaled(n);
  double total = 0;
  for (std::size_t w = 0; w < n; ++w) total += scaled[w] = std::pow(static_cast<double>(counts[w]), power);
  for (std::size_t w = 0; w < n; ++w) scaled[w] *= static_cast<double>(n) / total;
  pairing.pair([&](std::size_t w, double keep, std::size_t alias) {
    prob_[w] = keep;
    alias_[w] = static_cast<std::int32_t>(alias);
  });
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
