// Walker's alias method, Vose's construction, shared by the apps' samplers (word2vec's
// noise words, lda's generator and its Metropolis-Hastings proposals): n outcomes
// become n slots, each keeping its own outcome with some probability and otherwise
// giving way to one alias, so a draw is one uniform slot, one comparison and at most
// two table reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strata::apps {

/// Fills the slots from scaled probabilities. Deterministic (the outcomes are taken
/// in index order), so every program builds the same table from the same numbers.
/// Its buffers are kept between tables, for callers that build many.
class AliasPairing {
 public:
  /// The buffer for n outcomes: the caller sets entry i to outcome i's probability
  /// times n (so the entries average 1).
  std::span<double> scaled(std::size_t n) {
    scaled_.resize(n);
    return scaled_;
  }

  /// Calls slot(i, keep, alias) once for every outcome i: picking slot i uniformly,
  /// then outcome i with probability `keep` or else `alias`, draws every outcome with
  /// its probability. Each slot below 1 is topped up from one above it, which then
  /// keeps the rest; slots left over hold probability 1 up to rounding.
  template <class Slot>
  void pair(Slot slot) {
    small_.clear();
    large_.clear();
    for (std::size_t i = 0; i < scaled_.size(); ++i) (scaled_[i] < 1.0 ? small_ : large_).push_back(i);
    while (!small_.empty() && !large_.empty()) {
      const std::size_t s = small_.back(), l = large_.back();
      small_.pop_back();
      slot(s, scaled_[s], l);
      scaled_[l] -= 1.0 - scaled_[s];
      if (scaled_[l] < 1.0) {
        large_.pop_back();
        small_.push_back(l);
      }
    }
    for (const std::size_t i : large_) slot(i, 1.0, i);
    for (const std::size_t i : small_) slot(i, 1.0, i);
  }

 private:
  std::vector<double> scaled_;
  std::vector<std::size_t> small_, large_;
};

}  // namespace strata::apps
