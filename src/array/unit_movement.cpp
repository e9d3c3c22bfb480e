// Units of a dense array moved to the ranks whose conflict groups touch them and back
// to their owners (strata/detail/array_movement.hpp: fetch_dense_units,
// return_dense_units). A unit is `unit_elems` consecutive row-major elements: a row
// (every subscript but the last) or one element. Where the partition cuts the last
// dimension a row lies on several ranks, so the units travel element by element.
#include <algorithm>
#include <cstring>

#include "strata/detail/array_movement.hpp"
#include "strata/detail/dense_storage.hpp"
#include "strata/error.hpp"

namespace strata::detail {

namespace {

// What travels as one piece: a whole unit, or single elements where the partition
// cuts rows.
struct Pieces {
  std::size_t elems = 1;     ///< elements a piece
  std::size_t per_unit = 1;  ///< pieces a unit
};

Pieces pieces_of(const Distribution& dist, std::size_t unit_elems) {
  const Partition& p = dist.partition();
  const int last = static_cast<int>(dist.shape().size()) - 1;
  const bool cuts_rows = p.dim() == last || (p.kind() == Partition::Kind::block2d && p.dim1() == last);
  if (unit_elems <= 1 || cuts_rows) return {1, unit_elems == 0 ? 1 : unit_elems};
  return {unit_elems, 1};
}

// The row-major index of whole-array element `at`.
void index_of(const std::vector<std::int64_t>& shape, std::uint64_t at, std::vector<std::int64_t>& index) {
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto e = static_cast<std::uint64_t>(shape[d]);
    index[d] = static_cast<std::int64_t>(at % e);
    at /= e;
  }
}

// Elements of a row: the product of every extent but the first.
std::int64_t volume_of_rest(const std::vector<std::int64_t>& shape) {
  std::int64_t v = 1;
  for (std::size_t d = 1; d < shape.size(); ++d) v *= shape[d];
  return v;
}

template <class Value>
void put(Bytes& out, const Value& v) {
  const auto* b = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

// The pieces of `units` that other ranks own, ascending, with their owners.
void remote_pieces(const Comm& comm, const Distribution& dist, const Pieces& pieces,
                   std::span<const std::uint64_t> units, std::vector<std::uint64_t>& piece_of,
                   std::vector<int>& owner_of) {
  std::vector<std::int64_t> index(dist.shape().size());
  for (const std::uint64_t unit : units)
    for (std::size_t j = 0; j < pieces.per_unit; ++j) {
      const std::uint64_t piece = unit * pieces.per_unit + j;
      index_of(dist.shape(), piece * pieces.elems, index);
      const int owner = dist.owner(index.data());
      if (owner == comm.rank()) continue;
      piece_of.push_back(piece);
      owner_of.push_back(owner);
    }
}

// Collective: the rounds every rank takes to move its `count` pieces, `per_round` a
// round (the most any rank needs).
std::size_t rounds_for(Comm& comm, std::size_t count, std::size_t per_round) {
  const auto mine = static_cast<std::int64_t>((count + per_round - 1) / per_round);
  return static_cast<std::size_t>(comm.allreduce(mine, ReduceOp::max));
}

}  // namespace

void fetch_dense_units(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                       std::span<const std::uint64_t> needed, std::span<std::byte> whole, std::size_t round_bytes) {
  const std::vector<std::int64_t>& shape = dist.shape();
  const Pieces pieces = pieces_of(dist, unit_elems);
  const std::size_t piece_bytes = pieces.elems * element_size;
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::uint64_t> piece_of;
  std::vector<int> owner_of;
  remote_pieces(comm, dist, pieces, needed, piece_of, owner_of);
  // In rounds: a rank receives at most round_bytes of units at once.
  const std::size_t per_round = std::max<std::size_t>(1, round_bytes / piece_bytes);
  const std::size_t rounds = rounds_for(comm, piece_of.size(), per_round);
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t from = std::min(piece_of.size(), round * per_round);
    const std::size_t to = std::min(piece_of.size(), from + per_round);
    std::vector<std::vector<std::uint64_t>> asked(ranks);
    for (std::size_t k = from; k < to; ++k) asked[static_cast<std::size_t>(owner_of[k])].push_back(piece_of[k]);
    std::vector<Bytes> requests(ranks);
    for (std::size_t q = 0; q < ranks; ++q) {
      const auto bytes = std::as_bytes(std::span<const std::uint64_t>(asked[q]));
      requests[q].assign(bytes.begin(), bytes.end());
    }
    const std::vector<Bytes> wanted = comm.alltoallv(requests);
    requests = {};
    // Each asker's pieces, from this rank's part in `whole`.
    std::vector<Bytes> replies(ranks);
    for (std::size_t q = 0; q < ranks; ++q) {
      const std::size_t count = wanted[q].size() / sizeof(std::uint64_t);
      replies[q].resize(count * piece_bytes);
      for (std::size_t k = 0; k < count; ++k) {
        std::uint64_t piece;
        std::memcpy(&piece, wanted[q].data() + k * sizeof piece, sizeof piece);
        index_of(shape, piece * pieces.elems, index);
        STRATA_CHECK(dist.owner(index.data()) == comm.rank() && (piece + 1) * piece_bytes <= whole.size(),
                     "a unit was asked of a rank that does not hold it");
        std::memcpy(replies[q].data() + k * piece_bytes, whole.data() + piece * piece_bytes, piece_bytes);
      }
    }
    const std::vector<Bytes> answers = comm.alltoallv(replies);
    replies = {};
    for (std::size_t q = 0; q < ranks; ++q) {
      STRATA_CHECK(answers[q].size() == asked[q].size() * piece_bytes, "a rank answered with the wrong number of units");
      for (std::size_t k = 0; k < asked[q].size(); ++k)
        std::memcpy(whole.data() + asked[q][k] * piece_bytes, answers[q].data() + k * piece_bytes, piece_bytes);
    }
  }
}

void return_dense_units(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                        std::span<const std::uint64_t> written, std::span<std::byte> whole, std::size_t round_bytes) {
  const std::vector<std::int64_t>& shape = dist.shape();
  const Pieces pieces = pieces_of(dist, unit_elems);
  const std::size_t piece_bytes = pieces.elems * element_size;
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::uint64_t> piece_of;
  std::vector<int> owner_of;
  remote_pieces(comm, dist, pieces, written, piece_of, owner_of);
  // Where this rank's part is a range of whole rows, the pages outside it go back as
  // their units are packed, so the rank holds its part and a round's messages, not
  // the units a second time.
  const std::vector<IndexSet> box = dist.box(comm.rank());
  bool rows_only = !box.empty() && box[0].contiguous();
  for (std::size_t d = 1; d < box.size(); ++d) rows_only = rows_only && box[d].size() == shape[d];
  const std::size_t row_bytes = element_size * static_cast<std::size_t>(volume_of_rest(shape));
  const std::size_t part_lo = rows_only ? static_cast<std::size_t>(box[0].begin()) * row_bytes : 0;
  const std::size_t part_hi = rows_only ? static_cast<std::size_t>(box[0].end()) * row_bytes : 0;
  std::size_t released_to = 0;
  auto release_up_to = [&](std::size_t end) {  // the whole pages in [released_to, end) outside the part
    if (!rows_only || end <= released_to) return;
    if (released_to < part_lo) release_pages(whole.subspan(released_to, std::min(end, part_lo) - released_to));
    if (end > part_hi) {
      const std::size_t lo = std::max(released_to, part_hi);
      release_pages(whole.subspan(lo, end - lo));
    }
    released_to = end;
  };

  const std::size_t per_round = std::max<std::size_t>(1, round_bytes / piece_bytes);
  const std::size_t rounds = rounds_for(comm, piece_of.size(), per_round);
  const std::size_t record = sizeof(std::uint64_t) + piece_bytes;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t from = std::min(piece_of.size(), round * per_round);
    const std::size_t to = std::min(piece_of.size(), from + per_round);
    // To each owner: (piece number, its bytes) for every piece of this round it holds.
    std::vector<Bytes> out(ranks);
    for (std::size_t k = from; k < to; ++k) {
      Bytes& dst = out[static_cast<std::size_t>(owner_of[k])];
      put(dst, piece_of[k]);
      const auto at = static_cast<std::ptrdiff_t>(piece_of[k] * piece_bytes);
      dst.insert(dst.end(), whole.begin() + at, whole.begin() + at + static_cast<std::ptrdiff_t>(piece_bytes));
    }
    release_up_to(to < piece_of.size() ? piece_of[to] * piece_bytes : whole.size());
    const std::vector<Bytes> in = comm.alltoallv(out);
    out = {};
    for (const Bytes& src : in) {
      STRATA_CHECK(src.size() % record == 0, "a rank returned a partial unit");
      for (std::size_t at = 0; at < src.size(); at += record) {
        std::uint64_t piece;
        std::memcpy(&piece, src.data() + at, sizeof piece);
        STRATA_CHECK((piece + 1) * piece_bytes <= whole.size(), "a rank returned a unit outside the array");
        std::memcpy(whole.data() + piece * piece_bytes, src.data() + at + sizeof piece, piece_bytes);
      }
    }
  }
  release_up_to(whole.size());
}

}  // namespace strata::detail
