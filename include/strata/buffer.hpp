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
//
// Elements may be any trivially copyable type whose deltas sum (`+=`, or a
// std::array of numbers): a row struct per entity, for instance. A matrix's rows
// take one call each: add_row(row, deltas) (docs/relaxed_rows.md).
#pragma once

#include <cstdint>
#include <algorithm>
#include <optional>
#include <span>
#include <source_location>
#include <type_traits>
#include <utility>

#include "strata/apply.hpp"
#include "strata/buffer_writer.hpp"
#include "strata/dist_array.hpp"
#include "strata/element.hpp"
#include "strata/detail/worker.hpp"
#include "strata/detail/ps_element_ops.hpp"
#include "strata/detail/ps_typed_ops.hpp"
#include "strata/relaxed.hpp"

namespace strata {

template <class T, std::size_t N, class Apply = apply::Sum>
class Buffer final {
  static_assert(std::is_trivially_copyable_v<T>,
                "Buffer<T>: elements travel as bytes, so T must be trivially copyable");
  static_assert(summable_v<T>, "Buffer<T>: deltas of T are summed per element; give T an operator+= "
                               "(std::array of numbers needs none)");

 public:
  using state_type = typename Apply::state_type;
  using value_type = T;
  static constexpr std::size_t rank = N;

  explicit Buffer(DistArray<T, N>& target, Apply apply = {}) : Buffer(target, std::move(apply), std::nullopt) {}
  /// A relaxed array: served by the parameter server with this consistency.
  Buffer(DistArray<T, N>& target, Apply apply, Consistency consistency)
      : Buffer(target, std::move(apply), std::optional<Consistency>(consistency)) {}
  /// A relaxed array with managed communication, which ranks deltas by magnitude.
  Buffer(DistArray<T, N>& target, Apply apply, ManagedConsistency consistency)
      : Buffer(target, std::move(apply), std::optional<Consistency>(consistency)) {
    static_assert(std::is_arithmetic_v<T>, "Buffer<T> with managed communication: it ranks deltas by magnitude, so "
                                           "T must be a number (rows of a matrix are; a row struct is not)");
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// What the parameter server did for this array (zeros unless relaxed).
  RelaxedStats stats() const { return ps::stats(*engine_); }

  /// Adds `delta` to element i (folded in by the apply function when flushed).
  void add(const Index<N>& i, const T& delta, std::source_location where = std::source_location::current()) {
    if (shown_only(i, false, where)) [[unlikely]]
      return;
    if (!in_bounds(i, target_->shape())) [[unlikely]]
      throw ShapeError(fmt::format("Buffer::add: index {} is outside shape {}", to_string(i),
                                   to_string(target_->shape())));
    ops_.add(linearize(i, target_->shape()), delta);
  }

  /// Adds `delta` to the row `row` of a matrix (the elements along the last dimension
  /// at leading indices `row`): one call per row, as fast per element as a 1-D add.
  /// `delta` holds one value per column.
  void add_row(const Index<N - 1>& row, std::span<const T> delta,
               std::source_location where = std::source_location::current())
    requires(N >= 2)
  {
    Index<N> i{};
    std::copy(row.begin(), row.end(), i.begin());
    if (shown_only(i, true, where)) [[unlikely]]
      return;
    const auto cols = static_cast<std::size_t>(target_->shape()[N - 1]);
    if (!in_bounds(i, target_->shape()) || delta.size() != cols) [[unlikely]]
      throw ShapeError(fmt::format("Buffer::add_row: row {} with {} deltas does not fit shape {}", to_string(row),
                                   delta.size(), to_string(target_->shape())));
    ops_.add_row(linearize(i, target_->shape()), delta.data(), cols);
  }
  /// add_row for a matrix: the row's index.
  void add_row(std::int64_t row, std::span<const T> delta,
               std::source_location where = std::source_location::current())
    requires(N == 2)
  {
    add_row(Index<1>{row}, delta, where);
  }

  /// Adds for one call of a loop body, with this thread's delta set looked up once
  /// (strata/buffer_writer.hpp): take it inside the body.
  BufferWriter<Buffer> writer() { return BufferWriter<Buffer>(*this); }

  /// Elements with deltas waiting on this rank (counted per thread).
  std::size_t pending() const { return ops_.pending(); }

  /// Collective: every rank's deltas go to the elements' owners and are applied there.
  void flush() { ps::flush(*engine_); }

 private:
  // Shows a write to the thread's observer, if any: reconnaissance records the site,
  // checked runs verify it before it counts. True while recording (the write must not
  // count). A relaxed run that shares its cache has no checker: nothing to show it to.
  bool shown_only(const Index<N>& i, bool whole_row, const std::source_location& where) {
    if (!detail::t_observer || target_->cache_view()) [[likely]]
      return false;
    detail::t_observer->on_access(*target_, where, detail::AccessMode::buffered, i, whole_row, nullptr, 0);
    return detail::t_recording;
  }
  friend class BufferWriter<Buffer>;

  Buffer(DistArray<T, N>& target, Apply apply, const std::optional<Consistency>& consistency)
      : target_(&target), ops_(target, std::move(apply)) {
    if (target.is_sparse())
      throw OptionError(fmt::format("Buffer over array {}: only dense arrays can be written through a Buffer",
                                    target.name().empty() ? "(unnamed)" : target.name()));
    if (consistency && consistency->folds() && !std::is_same_v<Apply, apply::Sum>)
      throw OptionError(fmt::format("Buffer over array {}: {} adds deltas to the rank's cached copy as they are "
                                    "written, so its apply function must be apply::sum()",
                                    detail::array_label(target),
                                    consistency->hybrid ? "Hybrid consistency" : "read-my-writes"));
    engine_ = ps::make_buffer_engine(target, target.runtime(), ops_, consistency);
  }

  // For BufferWriter: whether an add may skip add()'s checks on this thread now (no
  // observer to show it to, no Hybrid folding), and the thread's set's pointers.
  bool writes_fast() const {
    if (detail::t_observer && !target_->cache_view()) return false;
    return !ops_.folding || fold_view();
  }
  bool folds() const { return ops_.folding; }
  bool folds_only() const { return ops_.fold_only; }
  const Shape<N>& shape() const { return target_->shape(); }
  typename ps::DeltaSet<T>::Slots thread_slots() const { return ops_.thread_slots(); }
  // Hybrid: the published cache view when it is laid out like the array (a writer
  // folds into it itself), else nullptr.
  const detail::CacheView* fold_view() const {
    const detail::CacheView* v = target_->cache_view();
    return ops_.folding && v && !v->slot_of ? v : nullptr;
  }

  DistArray<T, N>* target_;
  ps::TypedOps<T, N, Apply> ops_;     // delta sets, apply function, owner state
  ps::BufferEngineHandle engine_;     // the byte engine (src/ps): flush, replay, relaxed table
};

}  // namespace strata
