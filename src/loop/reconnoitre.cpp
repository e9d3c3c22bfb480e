// The reconnaissance pass of parallel_for: the body over a rank's iterations (or a
// sample of them) with every access reported to a per-thread Recorder.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::loop::detail {
namespace {

/// Which of a rank's n local iterations the reconnaissance pass visits: 1 in `stride`,
/// in runs of consecutive iterations (up to 4096, so rows the body reaches through
/// the first coordinate stay in cache; shorter for small spaces, so that at least
/// about 64 runs are chosen), picked by a hash of the run so the choice does not
/// alias with the period of a dimension.
class ReconSample {
 public:
  ReconSample(std::int64_t n, int stride) : stride_(std::max(stride, 1)) {
    while (run_bits_ < 12 && (n >> (run_bits_ + 1)) >= std::int64_t{64} * stride_) ++run_bits_;
  }
  bool has(std::int64_t pos) const {
    return stride_ == 1 || mix64(static_cast<std::uint64_t>(pos >> run_bits_)) <
                               ~std::uint64_t{0} / static_cast<std::uint64_t>(stride_);
  }
  /// Calls f(pos) for every sampled position in [begin, end), in order.
  template <class F>
  void for_each_in(std::int64_t begin, std::int64_t end, F&& f) const {
    for (std::int64_t run = begin; run < end; run = next_run(run))
      if (has(run))
        for (std::int64_t pos = run; pos < std::min(end, next_run(run)); ++pos) f(pos);
  }

 private:
  // The first position of the run after the one holding `pos`.
  std::int64_t next_run(std::int64_t pos) const { return ((pos >> run_bits_) + 1) << run_bits_; }

  int stride_;
  int run_bits_ = 0;
};

}  // namespace

bool reconnaissance_visits(std::int64_t n, int stride, std::int64_t pos) { return ReconSample(n, stride).has(pos); }

// The order of the pass does not change what it records, so a sparse space of two
// or more dimensions is visited cache-consciously, as a 2-D pass would: in chunks of
// 2^20 iterations, each chunk by tiles of about 1024 indices of the last dimension
// (key order within a tile). Rows the body reads through its last coordinate then
// stay in cache across a tile instead of being fetched from memory at almost every
// iteration. Element recording numbers iterations in key order; it keeps that order.
std::vector<Recorder> reconnoitre(const SpaceView& space, const LoopBody& body, bool record_elements, int stride,
                                  const std::vector<std::uint64_t>& row_keyed, const OwnershipTable* units_of,
                                  std::int64_t expected_accesses) {
  Runtime& rt = *space.rt;
  const int T = rt.threads();
  const auto dims = static_cast<std::size_t>(space.dims);
  const std::size_t es = space.elem_size;
  // Recorded elements number a rank's iterations in 31 bits (analysis::ElementAccess).
  if (record_elements && space.local_nnz > std::numeric_limits<std::int32_t>::max())
    throw ShapeError(fmt::format("recording the elements of a loop's accesses: this rank holds {} iterations, at "
                                 "most 2^31-1 are supported (use more ranks)",
                                 space.local_nnz));
  std::vector<Recorder> recs;
  for (int t = 0; t < T; ++t) {
    recs.emplace_back(space.dims, record_elements);
    recs.back().key_by_row(row_keyed);
    recs.back().note_units(units_of);
    // Each thread takes about an equal share of the iterations; a quarter more leaves
    // room for uneven shares (room never touched costs no memory).
    if (record_elements && expected_accesses > 0)
      recs.back().reserve_elements(static_cast<std::size_t>(expected_accesses / T + expected_accesses / (4 * T) + 64));
  }
  const std::int64_t n = space.local_nnz;
  // Tiles of the last dimension are 2^shift indices wide (at least 1024, at most 4096
  // tiles): a shift, unlike a division, costs nothing per iteration.
  const std::int64_t extent = space.shape[dims - 1];
  int shift = 10;
  while ((extent >> shift) > 4096) ++shift;
  const std::int64_t tiles = ((extent - 1) >> shift) + 1;
  const bool tiled = space.sparse && dims >= 2 && tiles > 1 && !record_elements;
  const ReconSample sample(n, stride);
  rt.pool().run_ranges(n, [&](std::int64_t begin, std::int64_t end, int t) {
    Recorder& rec = recs[static_cast<std::size_t>(t)];
    ObserverScope scope(&rec, true);
    ElementScratch copy(es);
    std::int64_t index[4];
    // The body's element is a copy: its writes are dropped with the pass.
    auto visit = [&](const std::int64_t* i, std::int64_t pos, const std::byte* value) {
      std::copy_n(i, dims, index);
      std::memcpy(copy.data(), value, es);
      rec.begin_iteration(std::span<const std::int64_t>(index, dims), pos);
      body.visit(body.body, index, copy.data());
    };
    if (!tiled) {
      std::int64_t i[4];
      sample.for_each_in(begin, end, [&](std::int64_t pos) {
        index_at(space, pos, i);
        visit(i, pos, space.values + static_cast<std::size_t>(pos) * es);
      });
      return;
    }
    auto tile_of = [&](std::int64_t pos) {
      return static_cast<std::size_t>(space.keys.at(pos, static_cast<int>(dims) - 1) >> shift);
    };
    constexpr std::int64_t kChunk = std::int64_t{1} << 20;
    std::vector<std::int64_t> chosen, order;
    std::vector<std::int64_t> start(static_cast<std::size_t>(tiles) + 1);
    for (std::int64_t c = begin; c < end; c += kChunk) {
      const std::int64_t c_end = std::min(end, c + kChunk);
      chosen.clear();
      sample.for_each_in(c, c_end, [&](std::int64_t pos) { chosen.push_back(pos); });
      // A counting sort of the chunk's positions by tile.
      std::fill(start.begin(), start.end(), 0);
      for (const std::int64_t pos : chosen) ++start[tile_of(pos) + 1];
      for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
      order.resize(chosen.size());
      for (const std::int64_t pos : chosen) order[static_cast<std::size_t>(start[tile_of(pos)]++)] = pos;
      std::int64_t i[4];
      for (const std::int64_t pos : order) {
        space.keys.get(pos, i);
        visit(i, pos, space.values + static_cast<std::size_t>(pos) * es);
      }
    }
  });
  return recs;
}

RecordedAccesses record_accesses(const SpaceView& space, const LoopBody& body,
                                 const std::vector<std::uint64_t>& row_keyed, const OwnershipTable* units_of,
                                 std::int64_t expected) {
  std::vector<Recorder> recs = reconnoitre(space, body, true, 1, row_keyed, units_of, expected);
  return take_accesses(recs);
}

RecordedAccesses take_accesses(std::vector<Recorder>& recs) {
  RecordedAccesses out;
  if (recs.size() == 1) {  // one thread: its lists as they are
    out.elements = recs[0].take_elements();
    out.units = recs[0].take_units();
    return out;
  }
  std::size_t n = 0, with_units = 0;
  for (const auto& rec : recs) n += rec.elements().size(), with_units += rec.units().size();
  out.elements.reserve(n);
  out.units.reserve(with_units);
  for (auto& rec : recs) {  // each thread's lists go as soon as they are joined
    const auto elements = rec.take_elements();
    const auto units = rec.take_units();
    out.elements.insert(out.elements.end(), elements.begin(), elements.end());
    out.units.insert(out.units.end(), units.begin(), units.end());
  }
  return out;
}

}  // namespace strata::loop::detail
