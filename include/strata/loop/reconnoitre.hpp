// The reconnaissance pass of parallel_for: the body over a rank's iterations (or a
// sample of them) with every access reported to a per-thread Recorder, plus the
// small pieces the executor shares with it (observer scopes, iteration indices).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/loop/recorder.hpp"
#include "strata/loop/worker.hpp"
#include "strata/random.hpp"

namespace strata::loop::detail {

/// Installs an observer on the calling thread for a scope.
class ObserverScope {
 public:
  ObserverScope(strata::detail::AccessObserver* o, bool recording) {
    strata::detail::t_observer = o;
    strata::detail::t_recording = recording;
  }
  ~ObserverScope() {
    strata::detail::t_observer = nullptr;
    strata::detail::t_recording = false;
  }
};

/// Index of local iteration `pos` of the space.
template <class Elem, std::size_t M>
Index<M> index_at(const DistArray<Elem, M>& space, std::int64_t pos) {
  if (space.is_sparse()) return space.local_keys()[static_cast<std::size_t>(pos)];
  const auto& box = space.local_box();
  Index<M> i{};
  for (std::size_t d = M; d-- > 0;) {
    i[d] = box[d].global(pos % box[d].size());
    pos /= box[d].size();
  }
  return i;
}

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

/// Runs the body once with accesses recorded over this rank's iterations (1 in
/// `stride` of them), on all of the rank's threads, each with its own recorder over a
/// contiguous share. The element handed to the body is a copy, so its writes are
/// dropped too.
///
/// The order of the pass does not change what it records, so a sparse space of two
/// or more dimensions is visited cache-consciously, as a 2-D pass would: in chunks of
/// 2^20 iterations, each chunk by tiles of about 1024 indices of the last dimension
/// (key order within a tile), from a packed copy of the chunk's indices and values.
/// Rows the body reads through its last coordinate then stay in cache across a tile
/// instead of being fetched from memory at almost every iteration.
template <class Elem, std::size_t M, class Body>
std::vector<Recorder> reconnoitre(DistArray<Elem, M>& space, Body& body, bool record_elements, int stride = 1) {
  Runtime& rt = space.runtime();
  const int T = rt.threads();
  std::vector<Recorder> recs;
  for (int t = 0; t < T; ++t) recs.emplace_back(static_cast<int>(M), record_elements);
  auto values = space.local_values();
  const auto n = static_cast<std::int64_t>(values.size());
  // Tiles of the last dimension are 2^shift indices wide (at least 1024, at most 4096
  // tiles): a shift, unlike a division, costs nothing per iteration.
  const std::int64_t extent = space.extent(M - 1);
  int shift = 10;
  while ((extent >> shift) > 4096) ++shift;
  const std::int64_t tiles = ((extent - 1) >> shift) + 1;
  // Element recording numbers iterations in key order; it keeps that order.
  const bool tiled = space.is_sparse() && M >= 2 && tiles > 1 && !record_elements;
  const ReconSample sample(n, stride);
  rt.pool().parallel_static(n, [&](std::int64_t begin, std::int64_t end, int t) {
    Recorder& rec = recs[static_cast<std::size_t>(t)];
    ObserverScope scope(&rec, true);
    auto visit = [&](const Index<M>& i, std::int64_t pos, Elem copy) {
      rec.begin_iteration(i, pos);
      body(i, copy);
    };
    if (!tiled) {
      sample.for_each_in(begin, end, [&](std::int64_t pos) {
        visit(index_at(space, pos), pos, values[static_cast<std::size_t>(pos)]);
      });
      return;
    }
    struct Item {
      Index<M> index;
      Elem value;
      std::int64_t pos;
    };
    const auto keys = space.local_keys();
    auto tile_of = [&](std::int64_t pos) {
      return static_cast<std::size_t>(keys[static_cast<std::size_t>(pos)][M - 1] >> shift);
    };
    constexpr std::int64_t kChunk = std::int64_t{1} << 20;
    std::vector<std::int64_t> chosen;
    std::vector<Item> items;
    std::vector<std::int64_t> start(static_cast<std::size_t>(tiles) + 1);
    for (std::int64_t c = begin; c < end; c += kChunk) {
      const std::int64_t c_end = std::min(end, c + kChunk);
      chosen.clear();
      sample.for_each_in(c, c_end, [&](std::int64_t pos) { chosen.push_back(pos); });
      std::fill(start.begin(), start.end(), 0);
      for (const std::int64_t pos : chosen) ++start[tile_of(pos) + 1];
      for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
      items.resize(chosen.size());
      for (const std::int64_t pos : chosen)
        items[static_cast<std::size_t>(start[tile_of(pos)]++)] = {keys[static_cast<std::size_t>(pos)],
                                                                  values[static_cast<std::size_t>(pos)], pos};
      for (const Item& it : items) visit(it.index, it.pos, it.value);
    }
  });
  return recs;
}

}  // namespace strata::loop::detail
