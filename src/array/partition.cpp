#include "strata/partition.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/detail/huge_pages.hpp"
#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata {

// ---- IndexSet ---------------------------------------------------------------

IndexSet IndexSet::range(std::int64_t begin, std::int64_t end) {
  IndexSet s;
  s.begin_ = begin;
  s.end_ = std::max(begin, end);
  return s;
}

IndexSet IndexSet::list(std::vector<std::int64_t> sorted_unique) {
  IndexSet s;
  s.contiguous_ = false;
  s.list_ = std::move(sorted_unique);
  if (!s.list_.empty()) {
    s.begin_ = s.list_.front();
    s.end_ = s.list_.back() + 1;
  }
  return s;
}

std::int64_t IndexSet::local_in_list(std::int64_t i) const {
  auto it = std::lower_bound(list_.begin(), list_.end(), i);
  return (it != list_.end() && *it == i) ? it - list_.begin() : -1;
}

std::vector<std::int64_t> IndexSet::intersect(const IndexSet& o) const {
  std::vector<std::int64_t> out;
  if (contiguous_ && o.contiguous_) {
    const std::int64_t b = std::max(begin_, o.begin_), e = std::min(end_, o.end_);
    for (std::int64_t i = b; i < e; ++i) out.push_back(i);
    return out;
  }
  if (contiguous_ || o.contiguous_) {
    const IndexSet& r = contiguous_ ? *this : o;
    const IndexSet& l = contiguous_ ? o : *this;
    auto lo = std::lower_bound(l.list_.begin(), l.list_.end(), r.begin_);
    auto hi = std::lower_bound(lo, l.list_.end(), r.end_);
    return {lo, hi};
  }
  std::set_intersection(list_.begin(), list_.end(), o.list_.begin(), o.list_.end(), std::back_inserter(out));
  return out;
}

std::vector<std::int64_t> IndexSet::positions_of(std::span<const std::int64_t> members) const {
  std::vector<std::int64_t> pos(members.size());
  if (contiguous_) {
    for (std::size_t k = 0; k < members.size(); ++k) pos[k] = members[k] - begin_;
    return pos;
  }
  std::size_t j = 0;
  for (std::size_t k = 0; k < members.size(); ++k) {
    while (j < list_.size() && list_[j] < members[k]) ++j;
    STRATA_CHECK(j < list_.size() && list_[j] == members[k], "positions_of: not a member");
    pos[k] = static_cast<std::int64_t>(j);
  }
  return pos;
}

bool IndexSet::operator==(const IndexSet& o) const {
  if (size() != o.size()) return false;
  if (contiguous_ && o.contiguous_) return begin_ == o.begin_ || size() == 0;
  for (std::int64_t k = 0; k < size(); ++k)
    if (global(k) != o.global(k)) return false;
  return true;
}

// ---- Partition --------------------------------------------------------------

Partition Partition::range(int dim, std::vector<std::int64_t> bounds) {
  Partition p;
  p.kind_ = Kind::range;
  p.dim0_ = dim;
  p.bounds_ = std::move(bounds);
  return p;
}

Partition Partition::balanced(int dim, std::vector<std::int64_t> weights) {
  Partition p = range(dim);
  p.weights_ = std::move(weights);
  return p;
}

Partition Partition::block2d(int dim0, int dim1, int grid_rows) {
  if (dim0 == dim1) throw ShapeError(fmt::format("block2d: the two dimensions must differ (both {})", dim0));
  Partition p;
  p.kind_ = Kind::block2d;
  p.dim0_ = dim0;
  p.dim1_ = dim1;
  p.grid_rows_ = grid_rows;
  return p;
}

Partition Partition::hash(int dim) {
  Partition p;
  p.kind_ = Kind::hash;
  p.dim0_ = dim;
  return p;
}

std::string Partition::describe() const {
  switch (kind_) {
    case Kind::range: return fmt::format("range(dim {}{})", dim0_, weights_.empty() ? "" : ", balanced");
    case Kind::block2d: return fmt::format("block2d(dims {}, {})", dim0_, dim1_);
    case Kind::hash: return fmt::format("hash(dim {})", dim0_);
  }
  return "?";
}

std::vector<std::int64_t> balanced_bounds(std::span<const std::int64_t> weights, int parts) {
  const auto n = static_cast<std::int64_t>(weights.size());
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(parts) + 1, n);
  bounds[0] = 0;
  long double total = 0;
  for (auto w : weights) total += static_cast<long double>(w);
  if (total <= 0) {
    for (int r = 0; r <= parts; ++r) bounds[static_cast<std::size_t>(r)] = n * r / parts;
    return bounds;
  }
  // Cut after index i as soon as the running sum reaches the next share, choosing
  // whichever side of the crossing element lands nearer the ideal boundary.
  long double run = 0;
  int next = 1;
  for (std::int64_t i = 0; i < n && next < parts; ++i) {
    const long double before = run;
    run += static_cast<long double>(weights[static_cast<std::size_t>(i)]);
    while (next < parts && run >= total * next / parts) {
      const long double target = total * next / parts;
      const std::int64_t cut = (target - before < run - target && i > bounds[next - 1]) ? i : i + 1;
      bounds[static_cast<std::size_t>(next)] = std::max(cut, bounds[static_cast<std::size_t>(next - 1)]);
      ++next;
    }
  }
  return bounds;
}

// ---- Distribution -----------------------------------------------------------

namespace {

std::vector<std::int64_t> even_bounds(std::int64_t extent, int parts) {
  std::vector<std::int64_t> b(static_cast<std::size_t>(parts) + 1);
  // extent * r / parts without forming extent * r, which overflows for extents near
  // 2^62 (a crafted manifest): with extent = q * parts + m it is q * r + m * r / parts.
  const std::int64_t q = extent / parts, m = extent % parts;
  for (int r = 0; r <= parts; ++r) b[static_cast<std::size_t>(r)] = q * r + m * r / parts;
  return b;
}

void check_dim(int dim, std::size_t rank, const char* what) {
  if (dim < 0 || static_cast<std::size_t>(dim) >= rank)
    throw ShapeError(fmt::format("{}: dimension {} does not exist in an array of {} dimensions", what, dim, rank));
}

}  // namespace

Distribution::Distribution(Partition p, std::vector<std::int64_t> shape, int ranks)
    : partition_(std::move(p)), shape_(std::move(shape)), ranks_(ranks) {
  STRATA_CHECK(ranks >= 1, "a distribution needs at least one rank");
  for (auto e : shape_)
    if (e < 0) throw ShapeError(fmt::format("negative extent in shape ({})", fmt::join(shape_, ", ")));
  const int d0 = partition_.dim();
  check_dim(d0, shape_.size(), "partition");
  const std::int64_t extent0 = shape_[static_cast<std::size_t>(d0)];
  switch (partition_.kind()) {
    case Partition::Kind::range:
      if (!partition_.bounds().empty()) {
        bounds0_ = partition_.bounds();
        bool ok = bounds0_.size() == static_cast<std::size_t>(ranks) + 1 && bounds0_.front() == 0 &&
                  bounds0_.back() == extent0 && std::is_sorted(bounds0_.begin(), bounds0_.end());
        if (!ok)
          throw ShapeError(fmt::format("range partition bounds ({}) must rise from 0 to the extent {} in {} steps",
                                       fmt::join(bounds0_, ", "), extent0, ranks));
      } else if (!partition_.weights().empty()) {
        if (static_cast<std::int64_t>(partition_.weights().size()) != extent0)
          throw ShapeError(fmt::format("balanced partition: {} weights for an extent of {}",
                                       partition_.weights().size(), extent0));
        bounds0_ = balanced_bounds(partition_.weights(), ranks);
      } else {
        bounds0_ = even_bounds(extent0, ranks);
      }
      break;
    case Partition::Kind::block2d: {
      check_dim(partition_.dim1(), shape_.size(), "block2d partition");
      grid_rows_ = partition_.grid_rows();
      if (grid_rows_ <= 0) {
        grid_rows_ = 1;
        for (int r = 1; r * r <= ranks; ++r)
          if (ranks % r == 0) grid_rows_ = r;
      }
      if (ranks % grid_rows_ != 0)
        throw ShapeError(fmt::format("block2d: {} grid rows do not divide {} ranks", grid_rows_, ranks));
      grid_cols_ = ranks / grid_rows_;
      bounds0_ = even_bounds(extent0, grid_rows_);
      bounds1_ = even_bounds(shape_[static_cast<std::size_t>(partition_.dim1())], grid_cols_);
      break;
    }
    case Partition::Kind::hash: break;
  }
}

int range_part(const std::vector<std::int64_t>& bounds, std::int64_t v) {
  // The last boundary b with b <= v, skipping empty ranges.
  auto it = std::upper_bound(bounds.begin() + 1, bounds.end() - 1, v);
  return static_cast<int>(it - bounds.begin()) - 1;
}

int Distribution::hash_owner(std::int64_t i) const {
  return static_cast<int>(mix64(static_cast<std::uint64_t>(i) ^ 0xA5A5A5A5DEADBEEFULL) %
                          static_cast<std::uint64_t>(ranks_));
}

std::vector<IndexSet> Distribution::box(int rank) const {
  std::vector<IndexSet> b;
  for (auto e : shape_) b.push_back(IndexSet::range(0, e));
  const auto d0 = static_cast<std::size_t>(partition_.dim());
  const auto r = static_cast<std::size_t>(rank);
  switch (partition_.kind()) {
    case Partition::Kind::range: b[d0] = IndexSet::range(bounds0_[r], bounds0_[r + 1]); break;
    case Partition::Kind::block2d: {
      const auto gr = r / static_cast<std::size_t>(grid_cols_), gc = r % static_cast<std::size_t>(grid_cols_);
      b[d0] = IndexSet::range(bounds0_[gr], bounds0_[gr + 1]);
      b[static_cast<std::size_t>(partition_.dim1())] = IndexSet::range(bounds1_[gc], bounds1_[gc + 1]);
      break;
    }
    case Partition::Kind::hash: {
      // The rows are listed: about extent / ranks of them. A list no machine could
      // hold is refused before the enumeration (which would take minutes, then fail).
      const auto listed = static_cast<std::uint64_t>(shape_[d0] / ranks_) * sizeof(std::int64_t);
      if (listed > detail::machine_memory())
        throw ShapeError(fmt::format("a hash partition of {} rows over {} rank(s) lists about {} bytes of row ids "
                                     "per rank, more than this machine's memory; use a range partition",
                                     shape_[d0], ranks_, listed));
      std::vector<std::int64_t> members;
      for (std::int64_t i = 0; i < shape_[d0]; ++i)
        if (hash_owner(i) == rank) members.push_back(i);
      b[d0] = IndexSet::list(std::move(members));
      break;
    }
  }
  return b;
}

std::string Distribution::describe() const {
  switch (partition_.kind()) {
    case Partition::Kind::range:
      return fmt::format("{} over {} ranks, bounds [{}]", partition_.describe(), ranks_, fmt::join(bounds0_, ", "));
    case Partition::Kind::block2d:
      return fmt::format("{} as a {}x{} grid", partition_.describe(), grid_rows_, grid_cols_);
    case Partition::Kind::hash: return fmt::format("{} over {} ranks", partition_.describe(), ranks_);
  }
  return "?";
}

}  // namespace strata
