// How a DistArray's elements are spread over ranks.
//
// A Partition is the user's choice of scheme (range over one dimension, a 2-D block
// grid, or hashing one dimension). A Distribution is that scheme resolved for one
// shape and one number of ranks: it answers "which rank owns this index" and "which
// indices does rank r hold". Every rank's share is a box: per dimension, a set of
// indices (a contiguous range, or an explicit sorted list for hashing), and the
// rank holds the Cartesian product of those sets.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace strata {

/// A sorted set of indices along one dimension: a range [begin, end) or a list.
class IndexSet {
 public:
  IndexSet() = default;
  static IndexSet range(std::int64_t begin, std::int64_t end);
  static IndexSet list(std::vector<std::int64_t> sorted_unique);

  bool contiguous() const { return contiguous_; }
  std::int64_t size() const { return contiguous_ ? end_ - begin_ : static_cast<std::int64_t>(list_.size()); }
  bool empty() const { return size() == 0; }
  /// The k-th smallest member.
  std::int64_t global(std::int64_t k) const { return contiguous_ ? begin_ + k : list_[static_cast<std::size_t>(k)]; }
  /// Position of `i` in the set, or -1. O(1) for ranges, O(log n) for lists.
  std::int64_t local(std::int64_t i) const {
    if (contiguous_) return (i >= begin_ && i < end_) ? i - begin_ : -1;
    return local_in_list(i);
  }
  bool contains(std::int64_t i) const { return local(i) >= 0; }
  /// Range bounds (valid when contiguous).
  std::int64_t begin() const { return begin_; }
  std::int64_t end() const { return end_; }

  /// Members of both sets, in increasing order.
  std::vector<std::int64_t> intersect(const IndexSet& other) const;
  /// Positions in this set of `sorted_members` (each must be a member), by one merge pass.
  std::vector<std::int64_t> positions_of(std::span<const std::int64_t> sorted_members) const;

  bool operator==(const IndexSet& o) const;

 private:
  std::int64_t local_in_list(std::int64_t i) const;
  bool contiguous_ = true;
  std::int64_t begin_ = 0, end_ = 0;
  std::vector<std::int64_t> list_;
};

/// The user's choice of partitioning scheme.
class Partition {
 public:
  enum class Kind { range, block2d, hash };

  /// Ranges over dimension `dim`. `bounds` (size ranks+1, from 0 to the extent,
  /// non-decreasing) fixes the split; empty means equal-width ranges.
  static Partition range(int dim, std::vector<std::int64_t> bounds = {});
  /// Ranges over `dim` whose boundaries balance `weights` (one weight per index
  /// along dim, e.g. a histogram of non-zeros) across ranks.
  static Partition balanced(int dim, std::vector<std::int64_t> weights);
  /// A grid_rows x grid_cols grid of blocks over dimensions (dim0, dim1); rank r
  /// holds block (r / cols, r % cols). grid_rows = 0 picks the squarest grid.
  static Partition block2d(int dim0, int dim1, int grid_rows = 0);
  /// Index i along `dim` goes to rank hash(i) mod ranks: breaks up skew in index order.
  static Partition hash(int dim);

  Kind kind() const { return kind_; }
  int dim() const { return dim0_; }
  int dim1() const { return dim1_; }
  int grid_rows() const { return grid_rows_; }
  const std::vector<std::int64_t>& bounds() const { return bounds_; }
  const std::vector<std::int64_t>& weights() const { return weights_; }
  /// "range(dim 0)", "block2d(0, 1)", "hash(dim 1)".
  std::string describe() const;
  bool operator==(const Partition&) const = default;

 private:
  Kind kind_ = Kind::range;
  int dim0_ = 0, dim1_ = 1, grid_rows_ = 0;
  std::vector<std::int64_t> bounds_, weights_;
};

/// The part holding `v` when `bounds` (size parts+1, non-decreasing) cut a range
/// into parts; empty parts are skipped.
int range_part(const std::vector<std::int64_t>& bounds, std::int64_t v);

/// Boundaries (size parts+1) that split `weights` into `parts` contiguous groups
/// of nearly equal total weight.
std::vector<std::int64_t> balanced_bounds(std::span<const std::int64_t> weights, int parts);

/// A Partition resolved for one shape and one number of ranks.
class Distribution {
 public:
  Distribution() = default;
  Distribution(Partition p, std::vector<std::int64_t> shape, int ranks);

  const Partition& partition() const { return partition_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  int ranks() const { return ranks_; }

  /// The rank that owns `index` (shape().size() coordinates).
  int owner(const std::int64_t* index) const {
    switch (partition_.kind()) {
      case Partition::Kind::range: return range_part(bounds0_, index[partition_.dim()]);
      case Partition::Kind::block2d:
        return range_part(bounds0_, index[partition_.dim()]) * grid_cols_ +
               range_part(bounds1_, index[partition_.dim1()]);
      case Partition::Kind::hash: return hash_owner(index[partition_.dim()]);
    }
    return 0;
  }
  int hash_owner(std::int64_t i) const;
  /// The box of indices rank r holds: one IndexSet per dimension.
  std::vector<IndexSet> box(int rank) const;
  /// Range boundaries along the partitioned dimension (range and block2d rows).
  const std::vector<std::int64_t>& bounds() const { return bounds0_; }
  const std::vector<std::int64_t>& col_bounds() const { return bounds1_; }
  int grid_rows() const { return grid_rows_; }
  int grid_cols() const { return grid_cols_; }
  std::string describe() const;
  /// Whether the two place every index alike: a balanced range partition equals a
  /// range partition with the bounds it resolved to.
  bool operator==(const Distribution& o) const {
    const Partition &a = partition_, &b = o.partition_;
    if (a.kind() != b.kind() || a.dim() != b.dim() || shape_ != o.shape_ || ranks_ != o.ranks_) return false;
    switch (a.kind()) {
      case Partition::Kind::range: return bounds0_ == o.bounds0_;
      case Partition::Kind::block2d: return a.dim1() == b.dim1() && bounds0_ == o.bounds0_ && bounds1_ == o.bounds1_;
      case Partition::Kind::hash: return true;
    }
    return false;
  }

 private:
  Partition partition_;
  std::vector<std::int64_t> shape_;
  int ranks_ = 1;
  int grid_rows_ = 1, grid_cols_ = 1;
  std::vector<std::int64_t> bounds0_, bounds1_;
};

}  // namespace strata
