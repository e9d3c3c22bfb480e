// A mini-batch's gradient of the model, row by row: for each row the batch's samples
// touched (in the order they first touched it), the sum of their gradients x * g
// and how many times it was touched. The serial program and each Strata worker keep
// one and apply it once per batch, so a row the batch's samples share is written
// once a batch, not once a sample: what keeps two threads from fighting over the
// cache lines of a dense model (Fashion-MNIST: every image touches most pixels).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "mlr/model.hpp"

namespace strata::apps::mlr {

class RowSums {
 public:
  /// Ready for a model of `rows` rows of `k` columns (cleared; keeps its storage).
  void reset(std::int64_t rows, std::size_t k) {
    if (static_cast<std::int64_t>(slot_.size()) != rows || k_ != k) {
      slot_.assign(static_cast<std::size_t>(rows), 0);
      k_ = k;
      touched_.clear();
    }
    clear();
  }
  /// Adds x * g[0..k) to row r's sum.
  void add(std::int64_t r, float x, const float* g) {
    std::int32_t& s = slot_[static_cast<std::size_t>(r)];
    if (s != 0) {
      const auto i = static_cast<std::size_t>(s - 1);
      add_scaled(sums_.data() + i * k_, {g, k_}, x);
      ++count_[i];
      return;
    }
    touched_.push_back(r);
    s = static_cast<std::int32_t>(touched_.size());
    if (sums_.size() < touched_.size() * k_) sums_.resize(std::max(touched_.size() * k_, 2 * sums_.size()));
    float* sum = sums_.data() + (touched_.size() - 1) * k_;
    for (std::size_t c = 0; c < k_; ++c) sum[c] = x * g[c];
    count_.push_back(1);
  }
  /// The rows touched, in first-touch order; sum(i) and count(i) are row i's of them.
  std::span<const std::int64_t> rows() const { return touched_; }
  std::span<const float> sum(std::size_t i) const { return {sums_.data() + i * k_, k_}; }
  std::int32_t count(std::size_t i) const { return count_[i]; }
  /// Forgets the batch (O(rows touched)).
  void clear() {
    for (std::int64_t r : touched_) slot_[static_cast<std::size_t>(r)] = 0;
    touched_.clear();
    count_.clear();
  }

 private:
  std::vector<std::int32_t> slot_;  // per model row: 1 + its place in touched_, 0 if untouched
  std::vector<std::int64_t> touched_;
  std::vector<float> sums_;         // touched_.size() rows of k_
  std::vector<std::int32_t> count_;
  std::size_t k_ = 0;
};

/// This thread's RowSums, ready for a model of `rows` x `k`.
inline RowSums& thread_row_sums(std::int64_t rows, std::size_t k) {
  thread_local RowSums sums;
  sums.reset(rows, k);
  return sums;
}

}  // namespace strata::apps::mlr
