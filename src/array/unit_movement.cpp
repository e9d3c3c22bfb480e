// Units of a dense array moved to the ranks whose conflict groups touch them and back
// to their owners (strata/detail/array_movement.hpp: fetch_dense_units,
// return_dense_units). A unit is `unit_elems` consecutive row-major elements: a row
// (every subscript but the last) or one element. Where the partition cuts the last
// dimension a row lies on several ranks, so the units travel element by element.
#include <algorithm>
#include <cstring>

#include "array/piece_runs.hpp"
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
  if (unit_elems <= 1 || partition_cuts_rows(dist)) return {1, unit_elems == 0 ? 1 : unit_elems};
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

// The pieces of a rank's units that other ranks own, in the order they travel, and
// the rounds they travel in (every rank takes as many rounds as the one that needs
// the most).
struct RemotePieces {
  Pieces pieces;
  std::size_t piece_bytes = 0;
  std::vector<std::uint64_t> piece_of;  ///< the next rank's first, then the one after, each owner's ascending
  std::vector<int> owner_of;
  std::size_t per_round = 1, rounds = 0;
  /// The pieces [from, to) of `round`.
  std::pair<std::size_t, std::size_t> round_range(std::size_t round) const {
    const std::size_t from = std::min(piece_of.size(), round * per_round);
    return {from, std::min(piece_of.size(), from + per_round)};
  }
};

// Collective. Rank r's rounds start at rank r + 1, so an owner is asked by about one
// rank a round, not by all of them at once.
RemotePieces remote_pieces(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                           std::span<const std::uint64_t> units, std::size_t round_bytes) {
  RemotePieces out;
  out.pieces = pieces_of(dist, unit_elems);
  out.piece_bytes = out.pieces.elems * element_size;
  const int ranks = comm.size();
  std::vector<std::vector<std::uint64_t>> of_owner(static_cast<std::size_t>(ranks));
  std::vector<std::int64_t> index(dist.shape().size());
  for (const std::uint64_t unit : units)
    for (std::size_t j = 0; j < out.pieces.per_unit; ++j) {
      const std::uint64_t piece = unit * out.pieces.per_unit + j;
      index_of(dist.shape(), piece * out.pieces.elems, index);
      const int owner = dist.owner(index.data());
      if (owner != comm.rank()) of_owner[static_cast<std::size_t>(owner)].push_back(piece);
    }
  for (int step = 1; step < ranks; ++step) {
    const int owner = (comm.rank() + step) % ranks;
    for (const std::uint64_t piece : of_owner[static_cast<std::size_t>(owner)]) {
      out.piece_of.push_back(piece);
      out.owner_of.push_back(owner);
    }
  }
  out.per_round = std::max<std::size_t>(1, round_bytes / out.piece_bytes);
  const auto mine = static_cast<std::int64_t>((out.piece_of.size() + out.per_round - 1) / out.per_round);
  out.rounds = static_cast<std::size_t>(comm.allreduce(mine, ReduceOp::max));
  return out;
}

}  // namespace

bool partition_cuts_rows(const Distribution& dist) {
  const Partition& p = dist.partition();
  const int last = static_cast<int>(dist.shape().size()) - 1;
  return p.dim() == last || (p.kind() == Partition::Kind::block2d && p.dim1() == last);
}

std::vector<WrittenUnit> announce_units(Comm& comm, const Distribution& dist, std::size_t unit_elems,
                                        std::span<const std::uint64_t> written) {
  const Pieces pieces = pieces_of(dist, unit_elems);
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<std::uint64_t>> to(ranks);
  std::vector<std::int64_t> index(dist.shape().size());
  for (const std::uint64_t unit : written) {
    int last = comm.rank();  // a unit's pieces of one owner lie side by side: tell it once
    for (std::size_t j = 0; j < pieces.per_unit; ++j) {
      index_of(dist.shape(), (unit * pieces.per_unit + j) * pieces.elems, index);
      const int owner = dist.owner(index.data());
      if (owner == last || owner == comm.rank()) continue;
      auto& list = to[static_cast<std::size_t>(owner)];
      if (list.empty() || list.back() != unit) list.push_back(unit);
      last = owner;
    }
  }
  std::vector<Bytes> out(ranks);
  for (std::size_t q = 0; q < ranks; ++q) put_runs(out[q], to[q]);
  const std::vector<Bytes> in = comm.alltoallv(out);
  std::vector<WrittenUnit> heard;
  for (std::size_t q = 0; q < ranks; ++q)
    for_each_in_runs(in[q], [&](std::uint64_t unit) { heard.push_back({unit, static_cast<int>(q)}); });
  return heard;
}

void fetch_dense_units(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                       std::span<const std::uint64_t> needed, std::span<std::byte> whole,
                       std::vector<LentUnit>* lent, std::size_t round_bytes) {
  const std::vector<std::int64_t>& shape = dist.shape();
  const auto ranks = static_cast<std::size_t>(comm.size());
  // In rounds: a rank receives at most round_bytes of units at once.
  const RemotePieces remote = remote_pieces(comm, dist, element_size, unit_elems, needed, round_bytes);
  const Pieces& pieces = remote.pieces;
  const std::size_t piece_bytes = remote.piece_bytes;
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t round = 0; round < remote.rounds; ++round) {
    const auto [from, to] = remote.round_range(round);
    std::vector<std::vector<std::uint64_t>> asked(ranks);
    for (std::size_t k = from; k < to; ++k)
      asked[static_cast<std::size_t>(remote.owner_of[k])].push_back(remote.piece_of[k]);
    std::vector<Bytes> requests(ranks);
    for (std::size_t q = 0; q < ranks; ++q) put_runs(requests[q], asked[q]);
    const std::vector<Bytes> wanted = comm.alltoallv(requests);
    requests = {};
    // Each asker's pieces, from this rank's part in `whole`, in the order asked.
    std::vector<Bytes> replies(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
      for_each_in_runs(wanted[q], [&](std::uint64_t piece) {
        index_of(shape, piece * pieces.elems, index);
        STRATA_CHECK(dist.owner(index.data()) == comm.rank() && (piece + 1) * piece_bytes <= whole.size(),
                     "a unit was asked of a rank that does not hold it");
        const auto* from = whole.data() + piece * piece_bytes;
        replies[q].insert(replies[q].end(), from, from + piece_bytes);
        if (lent && piece % pieces.per_unit == 0) lent->push_back({piece / pieces.per_unit, static_cast<int>(q)});
      });
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
                        std::span<const std::uint64_t> written, std::span<std::byte> whole,
                        std::size_t round_bytes) {
  const std::vector<std::int64_t>& shape = dist.shape();
  const auto ranks = static_cast<std::size_t>(comm.size());
  const RemotePieces remote = remote_pieces(comm, dist, element_size, unit_elems, written, round_bytes);
  const std::size_t piece_bytes = remote.piece_bytes;
  const std::vector<std::uint64_t>& piece_of = remote.piece_of;
  const std::vector<int>& owner_of = remote.owner_of;
  // Where this rank's part is a range of whole rows, the pages outside it go back as
  // their units are packed, so the rank holds its part and a round's messages, not
  // the units a second time. The part is then a range of rows, so each owner's part
  // is too, and the pieces run in ascending order within each owner's range.
  const std::vector<IndexSet> box = dist.box(comm.rank());
  // Only under ranges of rows is every owner's part a range too (a rank of a hash
  // partition may hold a single row, which is contiguous, among others' pieces).
  const Partition& partition = dist.partition();
  bool rows_only = partition.kind() == Partition::Kind::range && partition.dim() == 0 && !box.empty() &&
                   box[0].contiguous();
  for (std::size_t d = 1; d < box.size(); ++d) rows_only = rows_only && box[d].size() == shape[d];
  const std::size_t row_bytes = element_size * static_cast<std::size_t>(volume_of_rest(shape));
  const std::size_t part_lo = rows_only ? static_cast<std::size_t>(box[0].begin()) * row_bytes : 0;
  const std::size_t part_hi = rows_only ? static_cast<std::size_t>(box[0].end()) * row_bytes : 0;
  // The whole pages of [lo, hi) outside the part; nothing still to be packed lies there
  // (callers pass a run of packed pieces up to the next piece of the same owner).
  auto release = [&](std::size_t lo, std::size_t hi) {
    if (!rows_only || hi <= lo) return;
    if (lo < part_lo) release_pages(whole.subspan(lo, std::min(hi, part_lo) - lo));
    if (hi > part_hi) {
      const std::size_t from = std::max(lo, part_hi);
      release_pages(whole.subspan(from, hi - from));
    }
  };

  for (std::size_t round = 0; round < remote.rounds; ++round) {
    const auto [from, to] = remote.round_range(round);
    // To each owner: the numbers of the pieces of this round it holds, as runs after
    // their length in bytes, then the pieces' bytes in that order.
    std::vector<std::vector<std::uint64_t>> numbers(ranks);
    for (std::size_t k = from; k < to; ++k) numbers[static_cast<std::size_t>(owner_of[k])].push_back(piece_of[k]);
    std::vector<Bytes> out(ranks);
    for (std::size_t q = 0; q < ranks; ++q) {
      if (numbers[q].empty()) continue;
      Bytes runs;
      put_runs(runs, numbers[q]);
      put_varint(out[q], runs.size());
      out[q].insert(out[q].end(), runs.begin(), runs.end());
      for (const std::uint64_t piece : numbers[q]) {
        const auto* at = whole.data() + piece * piece_bytes;
        out[q].insert(out[q].end(), at, at + piece_bytes);
      }
    }
    // This round's pieces, run by run of one owner's: their pages outside the part go
    // back (up to where the owner's next piece starts, which is packed later).
    for (std::size_t k = from; k < to;) {
      std::size_t end = k + 1;
      while (end < to && owner_of[end] == owner_of[k]) ++end;
      const std::size_t lo = piece_of[k] * piece_bytes;
      const std::size_t hi = end < piece_of.size() && owner_of[end] == owner_of[k] ? piece_of[end] * piece_bytes
                                                                                  : (piece_of[end - 1] + 1) * piece_bytes;
      release(lo, hi);
      k = end;
    }
    const std::vector<Bytes> in = comm.alltoallv(out);
    out = {};
    for (std::size_t q = 0; q < ranks; ++q) {
      const std::span<const std::byte> src = in[q];
      if (src.empty()) continue;
      std::size_t at = 0;
      const auto runs_bytes = static_cast<std::size_t>(get_varint(src, at));
      STRATA_CHECK(runs_bytes <= src.size() - at, "a rank returned units without their numbers");
      std::size_t data = at + runs_bytes;
      for_each_in_runs(src.subspan(at, runs_bytes), [&](std::uint64_t piece) {
        STRATA_CHECK((piece + 1) * piece_bytes <= whole.size(), "a rank returned a unit outside the array");
        STRATA_CHECK(data + piece_bytes <= src.size(), "a rank returned a partial unit");
        std::memcpy(whole.data() + piece * piece_bytes, src.data() + data, piece_bytes);
        data += piece_bytes;
      });
      STRATA_CHECK(data == src.size(), "a rank returned more bytes than its units");
    }
  }
}

}  // namespace strata::detail
