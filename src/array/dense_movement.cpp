// Dense data movement on bytes: gathering a whole array, placing pieces where a
// distribution puts them, copying between boxes. Values travel without indices:
// both sides compute the same box intersections and walk them in the same order.
#include <algorithm>
#include <cstring>

#include "strata/detail/free_now.hpp"
#include "array/box_runs.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"

namespace strata::detail {

namespace {

std::vector<IndexSet> whole_box(const std::vector<std::int64_t>& shape) {
  std::vector<IndexSet> box;
  box.reserve(shape.size());
  for (const auto e : shape) box.push_back(IndexSet::range(0, e));
  return box;
}

}  // namespace

void gather_dense(Comm& comm, const Distribution& dist, std::span<const std::byte> local,
                  std::size_t element_size, std::span<std::byte> whole) {
  const auto all = comm.allgatherv(local);
  const std::vector<IndexSet> everything = whole_box(dist.shape());
  for (int r = 0; r < comm.size(); ++r) {
    const Bytes& part = all[static_cast<std::size_t>(r)];
    const BoxRuns runs(dist.box(r), everything);
    STRATA_CHECK(part.size() == static_cast<std::size_t>(runs.volume()) * element_size,
                 "gather: a rank sent a part of the wrong size");
    runs.for_each_run([&](std::int64_t at_part, std::int64_t at_whole, std::int64_t count) {
      std::memcpy(whole.data() + static_cast<std::size_t>(at_whole) * element_size,
                  part.data() + static_cast<std::size_t>(at_part) * element_size,
                  static_cast<std::size_t>(count) * element_size);
    });
  }
}

void place_dense_pieces(Comm& comm, const Distribution& dist, const std::vector<IndexSet>& my_box,
                        std::span<const DensePiece> pieces, const BoxOfPiece& box_of,
                        std::size_t element_size, std::span<std::byte> mine) {
  const int ranks = comm.size();
  std::vector<Bytes> send(static_cast<std::size_t>(ranks));
  for (const DensePiece& piece : pieces) {
    const std::vector<IndexSet> piece_box = box_of(piece.id);
    for (int r = 0; r < ranks; ++r) {
      const BoxRuns runs(piece_box, dist.box(r));
      if (runs.empty()) continue;
      Bytes& out = send[static_cast<std::size_t>(r)];
      append(out, piece.id);
      std::size_t at = out.size();
      out.resize(at + static_cast<std::size_t>(runs.volume()) * element_size);
      runs.for_each_run([&](std::int64_t at_piece, std::int64_t, std::int64_t count) {
        const std::size_t bytes = static_cast<std::size_t>(count) * element_size;
        std::memcpy(out.data() + at, piece.bytes.data() + static_cast<std::size_t>(at_piece) * element_size, bytes);
        at += bytes;
      });
    }
  }
  const auto received = comm.alltoallv(send);
  free_now(send);
  for (const Bytes& message : received) {
    Reader in(message);
    while (in.remaining() > 0) {
      const auto id = in.get<std::int64_t>();
      const BoxRuns runs(box_of(id), my_box);
      const std::span<const std::byte> values = in.take(static_cast<std::size_t>(runs.volume()) * element_size);
      std::size_t at = 0;
      runs.for_each_run([&](std::int64_t, std::int64_t at_mine, std::int64_t count) {
        const std::size_t bytes = static_cast<std::size_t>(count) * element_size;
        std::memcpy(mine.data() + static_cast<std::size_t>(at_mine) * element_size, values.data() + at, bytes);
        at += bytes;
      });
    }
  }
}

void scatter_dense_blocks(Comm& comm, const Distribution& dist, std::span<const std::byte> local,
                          std::size_t element_size, const std::vector<std::int64_t>& rows,
                          const std::vector<int>& to_rank, std::span<std::byte> whole) {
  const std::vector<std::int64_t>& shape = dist.shape();
  STRATA_CHECK(!shape.empty() && rows.size() == to_rank.size() + 1 && rows.front() == 0 && rows.back() == shape[0],
               "time blocks must cover dimension 0");
  std::int64_t row_elements = 1;
  for (std::size_t d = 1; d < shape.size(); ++d) row_elements *= shape[d];
  auto block_box = [&](std::size_t b) {
    std::vector<IndexSet> box = whole_box(shape);
    box[0] = IndexSet::range(rows[b], rows[b + 1]);
    return box;
  };
  // A block's elements lie row-major in its box, which spans whole rows: its k-th
  // element is element rows[b] * row_elements + k of the whole array.
  auto place = [&](std::size_t b, const BoxRuns& runs, const std::byte* values) {
    std::size_t at = 0;
    runs.for_each_run([&](std::int64_t, std::int64_t at_block, std::int64_t count) {
      const std::size_t bytes = static_cast<std::size_t>(count) * element_size;
      std::memcpy(whole.data() + static_cast<std::size_t>(rows[b] * row_elements + at_block) * element_size,
                  values + at, bytes);
      at += bytes;
    });
  };
  const int ranks = comm.size(), me = comm.rank();
  const std::vector<IndexSet> mine = dist.box(me);
  std::vector<Bytes> send(static_cast<std::size_t>(ranks));
  for (std::size_t b = 0; b < to_rank.size(); ++b) {
    const BoxRuns runs(mine, block_box(b));
    if (runs.empty()) continue;
    Bytes packed(static_cast<std::size_t>(runs.volume()) * element_size);
    std::size_t at = 0;
    runs.for_each_run([&](std::int64_t at_local, std::int64_t, std::int64_t count) {
      const std::size_t bytes = static_cast<std::size_t>(count) * element_size;
      std::memcpy(packed.data() + at, local.data() + static_cast<std::size_t>(at_local) * element_size, bytes);
      at += bytes;
    });
    if (to_rank[b] == me) {
      place(b, runs, packed.data());
      continue;
    }
    Bytes& out = send[static_cast<std::size_t>(to_rank[b])];
    append(out, static_cast<std::int64_t>(b));
    out.insert(out.end(), packed.begin(), packed.end());
  }
  const auto received = comm.alltoallv(send);
  free_now(send);
  for (int from = 0; from < ranks; ++from) {
    if (from == me) continue;
    Reader in(received[static_cast<std::size_t>(from)]);
    const std::vector<IndexSet> theirs = dist.box(from);
    while (in.remaining() > 0) {
      const auto b = static_cast<std::size_t>(in.get<std::int64_t>());
      STRATA_CHECK(b < to_rank.size(), "scatter_dense_blocks: a block id out of range");
      const BoxRuns runs(theirs, block_box(b));
      place(b, runs, in.take(static_cast<std::size_t>(runs.volume()) * element_size).data());
    }
  }
}

std::optional<std::pair<std::int64_t, std::int64_t>> rows_of_blocks(const std::vector<std::int64_t>& rows,
                                                                    const std::vector<int>& rank_of, int rank) {
  std::int64_t lo = 0, hi = 0, held = 0;
  bool any = false;
  for (std::size_t b = 0; b < rank_of.size(); ++b) {
    if (rank_of[b] != rank) continue;
    lo = any ? std::min(lo, rows[b]) : rows[b];
    hi = any ? std::max(hi, rows[b + 1]) : rows[b + 1];
    held += rows[b + 1] - rows[b];
    any = true;
  }
  if (held != hi - lo) return std::nullopt;
  return std::pair(lo, hi);
}

void copy_box_overlap(const std::vector<IndexSet>& from, std::span<const std::byte> src,
                      const std::vector<IndexSet>& to, std::span<std::byte> dst, std::size_t element_size) {
  const BoxRuns runs(from, to);
  runs.for_each_run([&](std::int64_t at_src, std::int64_t at_dst, std::int64_t count) {
    std::memcpy(dst.data() + static_cast<std::size_t>(at_dst) * element_size,
                src.data() + static_cast<std::size_t>(at_src) * element_size,
                static_cast<std::size_t>(count) * element_size);
  });
}

}  // namespace strata::detail
