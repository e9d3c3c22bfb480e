// A topic row: one document's or one word's token counts per topic, together with
// the list of topics whose count is non-zero. The sampler's document and word
// buckets walk that list, so they cost O(non-zeros) instead of O(K): after a few
// passes a document uses a handful of topics and most words a few dozen.
//
// A row is 2K+1 int32 cells, so it fits a DistArray row (strata.cpp) as well as a
// plain vector (serial.cpp), and both versions do the same integer operations:
//   [0, K)        count of topic k
//   [K]           number of non-zero topics
//   [K+1, 2K+1)   the non-zero topics, first `nonzeros()` cells used, no order
// Removal finds the topic in the list and swaps the list's last topic into its
// place: O(non-zeros), no more than the draw that follows it walks. (Rows had a
// third part, each topic's place in the list, for O(1) removal; it made every row
// half as large again, and a 2-D plan moves word rows between ranks at every step.)
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

namespace strata::apps::lda {

/// Cells of a topic row for K topics.
constexpr std::int64_t topic_row_width(int K) { return 2 * static_cast<std::int64_t>(K) + 1; }

/// A view of one row; Cell is std::int32_t (counts can change) or const std::int32_t.
template <class Cell>
class BasicTopicRow {
 public:
  BasicTopicRow(std::span<Cell> cells, int K) : c_(cells.data()), K_(K) {}

  std::int32_t count(std::int32_t k) const { return c_[k]; }
  std::int32_t nonzeros() const { return c_[K_]; }
  /// The i-th topic of the non-zero list (i < nonzeros()).
  std::int32_t topic(std::int32_t i) const { return c_[K_ + 1 + i]; }

  void add(std::int32_t k)
    requires(!std::is_const_v<Cell>)
  {
    if (c_[k]++ == 0) c_[K_ + 1 + c_[K_]++] = k;
  }
  void remove(std::int32_t k)
    requires(!std::is_const_v<Cell>)
  {
    if (--c_[k] == 0) {
      // k is listed, its count having been positive; the bounds keep a row of
      // zeros (a reconnaissance's stand-in for another rank's row) in bounds.
      Cell* list = c_ + K_ + 1;
      const std::int32_t n = c_[K_] < K_ ? c_[K_] : K_;
      std::int32_t at = 0;
      while (at < n && list[at] != k) ++at;
      if (at < n) list[at] = list[c_[K_] = n - 1];
    }
  }
  /// Lists the non-zero topics again, in increasing order, from the counts alone
  /// (after counts were changed cell by cell, as the data-parallel variant's Buffer does).
  void rebuild()
    requires(!std::is_const_v<Cell>)
  {
    c_[K_] = 0;
    for (std::int32_t k = 0; k < K_; ++k)
      if (c_[k] > 0) c_[K_ + 1 + c_[K_]++] = k;
  }

  /// The counts are non-negative and the list holds exactly the non-zero topics,
  /// each once.
  bool well_formed() const {
    std::int32_t nonzero = 0;
    for (std::int32_t k = 0; k < K_; ++k) {
      if (c_[k] < 0) return false;
      nonzero += c_[k] > 0;
    }
    if (c_[K_] != nonzero) return false;
    for (std::int32_t i = 0; i < c_[K_]; ++i) {
      const std::int32_t k = topic(i);
      if (k < 0 || k >= K_ || c_[k] <= 0) return false;
      for (std::int32_t j = 0; j < i; ++j)
        if (topic(j) == k) return false;
    }
    return true;
  }

 private:
  Cell* c_;
  int K_;
};

using TopicRow = BasicTopicRow<std::int32_t>;
using TopicRowView = BasicTopicRow<const std::int32_t>;

}  // namespace strata::apps::lda
