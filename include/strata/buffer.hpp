// Buffer: writes to a DistArray that take no part in dependence analysis (DESIGN.md §5).
//
// When a loop's writes cannot keep dependences (a dense model that every iteration
// updates, weights indexed by the data), route them through a Buffer:
//
//   auto w = strata::DistArray<float, 1>::zeros(rt, {features});
//   strata::Buffer wbuf(w, strata::apply::adagrad(0.1));
//   strata::parallel_for(samples, [&](const strata::Index<1>&, const Sample& s) {
//     float z = 0;
//     for (auto [f, x] : s.features) z += w.read({f}) * x;
//     for (auto [f, x] : s.features) wbuf.add({f}, (sigmoid(z) - s.label) * x);
//   });
//
// The planner ignores buffered writes, so such a loop runs data-parallel. Each thread
// sums its deltas per element; when the loop ends, every rank's sums travel to the
// elements' owners, which fold them in with the apply function one source rank at a
// time, in rank order (so a run is reproducible for a given number of ranks and
// threads). Reads during the loop see the array as it was before the loop: one clock
// per loop call, bulk-synchronous, with the array copied whole to every rank.
// Outside loops, add() collects into thread 0's buffer until flush(). The array must
// be dense and outlive its Buffer.
//
// Given a Consistency (strata/relaxed.hpp), the Buffer makes its array a relaxed
// parameter-server table instead: owners, caches of each rank's read set, clocks
// every N iterations, stale-synchronous reads.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <type_traits>
#include <utility>

#include "strata/apply.hpp"
#include "strata/buffer_writer.hpp"
#include "strata/dist_array.hpp"
#include "strata/detail/worker.hpp"
#include "strata/detail/ps_element_ops.hpp"
#include "strata/detail/ps_typed_ops.hpp"
#include "strata/relaxed.hpp"

namespace strata {

template <class T, std::size_t N, class Apply = apply::Sum>
class Buffer final {
 public:
  using state_type = typename Apply::state_type;
  using value_type = T;
  static constexpr std::size_t rank = N;

  explicit Buffer(DistArray<T, N>& target, Apply apply = {}) : Buffer(target, std::move(apply), std::nullopt) {}
  /// A relaxed array: served by the parameter server with this consistency.
  Buffer(DistArray<T, N>& target, Apply apply, Consistency consistency)
      : Buffer(target, std::move(apply), std::optional<Consistency>(consistency)) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// What the parameter server did for this array (zeros unless relaxed).
  RelaxedStats stats() const { return ps::stats(*engine_); }

  /// Adds `delta` to element i (folded in by the apply function when flushed).
  void add(const Index<N>& i, const T& delta, std::source_location where = std::source_location::current()) {
    // Reconnaissance records the site; checked runs verify it before it counts. A
    // relaxed run that shares its cache has no checker: nothing to show the write to.
    if (detail::t_observer && !target_->cache_view()) [[unlikely]] {
      detail::t_observer->on_access(*target_, where, detail::AccessMode::buffered, i, false, nullptr, 0);
      if (detail::t_recording) return;
    }
    if (!in_bounds(i, target_->shape())) [[unlikely]]
      throw ShapeError(fmt::format("Buffer::add: index {} is outside shape {}", to_string(i),
                                   to_string(target_->shape())));
    ops_.add(linearize(i, target_->shape()), delta);
  }

  /// Adds for one call of a loop body, with this thread's delta set looked up once
  /// (strata/buffer_writer.hpp): take it inside the body.
  BufferWriter<Buffer> writer() { return BufferWriter<Buffer>(*this); }

  /// Elements with deltas waiting on this rank (counted per thread).
  std::size_t pending() const { return ops_.pending(); }

  /// Collective: every rank's deltas go to the elements' owners and are applied there.
  void flush() { ps::flush(*engine_); }

 private:
  friend class BufferWriter<Buffer>;

  Buffer(DistArray<T, N>& target, Apply apply, const std::optional<Consistency>& consistency)
      : target_(&target), ops_(target, std::move(apply)) {
    if (target.is_sparse())
      throw OptionError(fmt::format("Buffer over array {}: only dense arrays can be written through a Buffer",
                                    target.name().empty() ? "(unnamed)" : target.name()));
    if (consistency && consistency->hybrid && !std::is_same_v<Apply, apply::Sum>)
      throw OptionError(fmt::format("Buffer over array {}: Hybrid consistency adds deltas to the rank's cached copy "
                                    "as they are written, so its apply function must be apply::sum()",
                                    detail::array_label(target)));
    engine_ = ps::make_buffer_engine(target, target.runtime(), ops_, consistency);
  }

  // For BufferWriter: whether an add may skip add()'s checks on this thread now (no
  // observer to show it to, no Hybrid folding), and the thread's set's pointers.
  bool writes_fast() const {
    if (detail::t_observer && !target_->cache_view()) return false;
    return !ops_.folding;
  }
  typename ps::DeltaSet<T>::Slots thread_slots() const { return ops_.thread_slots(); }
  std::int64_t elements() const { return strata::volume(target_->shape()); }

  DistArray<T, N>* target_;
  ps::TypedOps<T, N, Apply> ops_;     // delta sets, apply function, owner state
  ps::BufferEngineHandle engine_;     // the byte engine (src/ps): flush, replay, relaxed table
};

}  // namespace strata
