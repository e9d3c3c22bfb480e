// DistArray's data movement on bytes. The typed DistArray<T, N> hands its storage to
// these functions as spans of bytes with the element size and the record layout;
// they are compiled once, in src/array/, rather than once per element type and
// dimension count in every translation unit that names a DistArray.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/detail/key_column.hpp"
#include "strata/partition.hpp"
#include "strata/thread_pool.hpp"

namespace strata {

/// What to do when a sparse array receives the same index more than once.
enum class Duplicates {
  error,  ///< raise ShapeError naming the index
  sum,    ///< add the values (arithmetic element types only)
  first,  ///< keep the value that came first (file order when loading)
  last,   ///< keep the value that came last
};

}  // namespace strata

namespace strata::detail {

/// One dense piece: the elements of box_of(id), row-major in that box, as bytes.
struct DensePiece {
  std::int64_t id = 0;
  std::span<const std::byte> bytes;
};
using BoxOfPiece = std::function<std::vector<IndexSet>(std::int64_t)>;

/// Collective: every rank's dense box (`local`, in box order) put together into
/// `whole`, the full array row-major, on every rank.
void gather_dense(Comm& comm, const Distribution& dist, std::span<const std::byte> local,
                  std::size_t element_size, std::span<std::byte> whole);

/// Collective: puts the pieces any rank holds where `dist` places them. `mine` is this
/// rank's dense storage, box `my_box`. The receiver recomputes the intersection of a
/// piece's box with its own, so only values travel, not indices.
void place_dense_pieces(Comm& comm, const Distribution& dist, const std::vector<IndexSet>& my_box,
                        std::span<const DensePiece> pieces, const BoxOfPiece& box_of,
                        std::size_t element_size, std::span<std::byte> mine);

/// Collective: the blocks of rows along dimension 0 (block b: rows [rows[b], rows[b+1])),
/// each from the ranks' parts under `dist` (`local`: this rank's, in box order) to rank
/// to_rank[b]. `whole` addresses the full array row-major; only the rows of this rank's
/// blocks are written.
void scatter_dense_blocks(Comm& comm, const Distribution& dist, std::span<const std::byte> local,
                          std::size_t element_size, const std::vector<std::int64_t>& rows,
                          const std::vector<int>& to_rank, std::span<std::byte> whole);

/// The rows [first, second) along dimension 0 of the blocks b with rank_of[b] == `rank`
/// (block b: rows [rows[b], rows[b+1])), when they are one range (empty: an empty
/// range); nullopt when they are not.
std::optional<std::pair<std::int64_t, std::int64_t>> rows_of_blocks(const std::vector<std::int64_t>& rows,
                                                                    const std::vector<int>& rank_of, int rank);

/// A unit this rank lent for a call, and the rank it lent it to.
struct LentUnit {
  std::uint64_t unit = 0;
  int to = 0;
};

/// Collective, for conflict groups spread over the ranks (src/loop/spread.hpp): `whole`
/// (the full array row-major, already holding this rank's part under `dist` in place)
/// receives every unit in `needed` (ascending) from its owner. A unit is `unit_elems`
/// consecutive row-major elements (a row, or one element). `lent` (when given) gets
/// the units whose first element is in this rank's part that other ranks asked for,
/// with the asker (where the partition cuts rows, the first element's owner speaks for
/// the unit). The
/// units come in rounds of at most `round_bytes` a rank receives, so the messages stay
/// small next to the units.
void fetch_dense_units(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                       std::span<const std::uint64_t> needed, std::span<std::byte> whole,
                       std::vector<LentUnit>* lent = nullptr, std::size_t round_bytes = std::size_t{4} << 20);

/// Whether `dist` partitions the last dimension (by range, hash or a 2-D block), so
/// that a row (every subscript but the last) may lie on several ranks: the units of
/// the functions below then travel element by element.
bool partition_cuts_rows(const Distribution& dist);

/// A unit another rank wrote, as its owner hears of it (announce_units).
struct WrittenUnit {
  std::uint64_t unit = 0;
  int from = 0;
};

/// Collective: tells the ranks holding a piece of each unit in `written` (ascending;
/// units as fetch_dense_units numbers them) that this rank wrote it, before any bytes
/// travel, so that the owners can refuse the run while their parts are untouched.
/// Returns the units other ranks wrote that have a piece in this rank's part.
std::vector<WrittenUnit> announce_units(Comm& comm, const Distribution& dist, std::size_t unit_elems,
                                        std::span<const std::uint64_t> written);

/// Collective: the units in `written` (ascending) of this rank's `whole` go to the
/// ranks that own them, which copy them into their `whole` at the same place. Only
/// this rank's part of `whole` matters afterwards: where the part is a range of rows,
/// the pages outside it go back as their units are packed (they read as zeros). In
/// rounds, as fetch_dense_units. Unit numbers travel as runs (src/array/piece_runs.hpp).
void return_dense_units(Comm& comm, const Distribution& dist, std::size_t element_size, std::size_t unit_elems,
                        std::span<const std::uint64_t> written, std::span<std::byte> whole,
                        std::size_t round_bytes = std::size_t{4} << 20);

/// Local: copies the elements common to boxes `from` and `to` from `src` (box `from`,
/// row-major) to `dst` (box `to`, row-major).
void copy_box_overlap(const std::vector<IndexSet>& from, std::span<const std::byte> src,
                      const std::vector<IndexSet>& to, std::span<std::byte> dst, std::size_t element_size);

/// How an entry (strata::Entry<T, N>) lies in memory: N int64 subscripts at offset 0,
/// the value at `value_offset`.
struct RecordLayout {
  int dims = 0;
  std::size_t record_size = 0;
  std::size_t value_offset = 0;
  std::size_t value_size = 0;
};

/// Collective: sends every record to the rank that owns its index under `dist`, in
/// rounds of at most `round_bytes` of each rank's records, so that a rank holds about
/// one copy of its share, not its records, the send buffers and what arrives at once
/// (loads are memory-bound). The records are the caller's to free: their pages are
/// handed back as they are sent (the caller must not read them again), then
/// `release_input` runs. The records received go to `append` in pieces (after
/// `reserve` with their count), grouped by source rank in rank order, each source's
/// in its order; each piece is freed once appended.
void route_records(Comm& comm, const Distribution& dist, const RecordLayout& layout,
                   std::span<const std::byte> records, const std::function<void()>& release_input,
                   const std::function<void(std::size_t count)>& reserve,
                   const std::function<void(std::span<const std::byte>)>& append,
                   std::size_t round_bytes = std::size_t{16} << 20);

/// Adds the value at `from` into the value at `to`; nullptr for element types without +=.
using AddValue = void (*)(std::byte* to, const std::byte* from);

/// Where absorb_records writes its result: room for `count` keys (N subscripts of
/// key_width_for(shape) bytes each) and `count` values.
using SparseOutput = std::function<std::pair<std::byte*, std::byte*>(std::size_t count)>;

/// Collective: sorts the received records by index (stably: arrival order breaks
/// ties), merges equal indices per `dup` and writes keys and values through
/// `output`. A duplicate under Duplicates::error on any rank raises the same
/// ShapeError on every rank. `release_input` runs once the records are no longer
/// needed. Returns the number of stored elements summed over ranks. `pool` (may be
/// null) lends its threads to the sort; it must not be running a task.
std::int64_t absorb_records(Comm& comm, ThreadPool* pool, const std::vector<std::int64_t>& shape,
                            const RecordLayout& layout, std::span<const std::byte> records, Duplicates dup,
                            AddValue add, const std::function<void()>& release_input, const SparseOutput& output);

/// Collective: raises one ShapeError on every rank if any rank's record lies outside
/// `shape`; `what` names the operation in the message.
void check_records_in_bounds(Comm& comm, const std::vector<std::int64_t>& shape, const RecordLayout& layout,
                             std::span<const std::byte> records, const char* what);

/// Collective: a fingerprint of indices and values that does not depend on the
/// partition (a sum of per-element hashes). Dense: `values` in the order of `box`;
/// sparse (`keys` not empty or `sparse`): one key per value.
std::uint64_t content_fingerprint_of(Comm& comm, const std::vector<std::int64_t>& shape, bool sparse,
                                     const std::vector<IndexSet>& box, const KeyColumn& keys,
                                     std::span<const std::byte> values, std::size_t element_size);

/// "(3, 4)": an index as messages print it.
std::string index_label(std::span<const std::int64_t> index);

}  // namespace strata::detail
