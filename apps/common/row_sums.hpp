// A mini-batch's gradient of a model, row by row: for each row the batch's items
// touched (in the order they first touched it), the sum of their gradients x * g
// and how many times it was touched. The serial program and each Strata worker keep
// one and apply it once per batch, so a row the batch's items share is written once
// a batch, not once an item: what keeps two threads from fighting over the cache
// lines of a row every item writes (mlr on Fashion-MNIST: every image touches most
// pixels; transe: every triple of a relation writes its row).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/kernels.hpp"

namespace strata::apps {

/// Rows at least this long take the library's kernels (AVX2 or AVX-512, picked at run
/// time, the same bits on every machine); shorter ones inline loops, since a kernel's
/// call costs more than a 10-class row's arithmetic.
inline constexpr std::size_t kernel_row = 64;

/// z += x * row, column by column.
inline void add_scaled(float* z, std::span<const float> row, float x) {
  const std::size_t k = row.size();
  if (k >= kernel_row) return kernels::axpy(x, row.data(), z, k);
  for (std::size_t c = 0; c < k; ++c) z[c] += x * row[c];
}

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

}  // namespace strata::apps
