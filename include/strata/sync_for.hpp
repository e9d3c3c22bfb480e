// sync_for: a mini-batch loop for dense models, in the spirit of STRADS-AP's SyncFor
// (DESIGN.md §5).
//
// When every iteration updates the whole model (a dense layer, a small regression),
// keeping dependences is hopeless and a parameter server's per-element traffic is
// waste. sync_for runs the body data-parallel on every worker (ranks x threads), each
// worker on its own copy of the synced arrays, in mini-batches: after every worker
// has run `batch` of its iterations, the workers' changes to each element (their
// deltas from the mini-batch's starting values) are combined, the combined delta is
// added to the model, and every copy starts the next mini-batch from the result.
//
//   auto w = strata::DistArray<double, 1>::zeros(rt, {features});
//   strata::sync_for(samples, [&](const strata::Index<1>&, const Sample& s) {
//     double z = 0;
//     for (auto [f, x] : s.features) z += w.read({f}) * x;      // this worker's copy
//     for (auto [f, x] : s.features) w({f}) -= lr * (sigmoid(z) - s.label) * x;
//   }, {.batch = 32}, strata::synced(w, strata::Combine::average));
//
// The body is the serial loop's body: reads and writes of a synced array go to the
// worker's copy through the same accessors. Other arrays may be read (not written:
// that would race) and written through Buffers. Combining:
// - Combine::average: the mean of the deltas of the workers that ran iterations in
//   the mini-batch (model averaging);
// - Combine::sum: their sum (each worker's delta is a sum of gradient steps);
// - a function T(std::span<const T> deltas), given those workers' deltas of one
//   element in worker order (rank-major): a median, a clipped mean, ...
// Deltas are summed per rank in thread order, then over ranks in rank order, so a
// run is reproducible for a given number of ranks and threads; each rank holds the
// whole model during the loop.
//
// Consistency, as STRADS-AP's SyncFor offers it (docs/buffers.md):
// - BSP (the default): every worker starts each mini-batch from the combined model.
// - SSP (`.staleness = s`): a worker at mini-batch b starts from the model combined
//   up to mini-batch b-s-1 plus its own changes since: the combined update of
//   mini-batch b reaches the copies s mini-batches later (exactly s; deterministic).
// - Hybrid (`.hybrid = true`): a rank's threads share one copy and update it without
//   locks (Hogwild; two threads writing one element at once may lose a write); the
//   ranks' copies are combined after each mini-batch as one worker each (an average
//   over ranks, a sum, or the function given one delta per rank). Not reproducible
//   with more than one thread per rank. A body that throws fails the call on every rank (the
// others with an Error saying so); the model keeps every mini-batch completed before
// it. Collective.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "strata/dist_array.hpp"
#include "strata/loop/loop_body.hpp"

namespace strata {

/// How one mini-batch's per-worker deltas of an element become the model's update.
enum class Combine { average, sum };

struct SyncOptions {
  std::int64_t batch = 64;  ///< iterations per worker per mini-batch
  int staleness = 0;        ///< SSP: mini-batches a worker's copy lags the combined model (0: BSP)
  bool hybrid = false;      ///< Hybrid: one copy per rank, shared by its threads without locks
  /// Where the call is (taken where the options are written, i.e. at the call): it
  /// names the loop call for checkpoints and resuming (strata/recovery.hpp).
  std::source_location where = std::source_location::current();
};

/// What one sync_for call did (the same on every rank except the fields marked
/// "this rank"), as parallel_for's LoopReport says it for parallel_for.
struct SyncReport {
  /// A resumed run skipped the call, as its checkpoint covered it
  /// (strata/recovery.hpp); no other field is set.
  bool skipped = false;
  /// A single-process replay ran the call's recorded mini-batches; only `batches` is set.
  bool replayed = false;
  std::int64_t batches = 0;     ///< mini-batches, each ending in a sync
  double compute_seconds = 0;   ///< this rank: running the body
  double sync_seconds = 0;      ///< this rank: combining deltas (communication included)
  std::int64_t bytes_sent = 0;  ///< this rank: deltas sent to other ranks
};

namespace detail {

/// The type-erased face of a synced array, as sync_for drives it.
class SyncedBase {
 public:
  virtual ~SyncedBase() = default;
  virtual std::uint64_t array_id() const = 0;
  /// Collective: every rank takes the whole array; each of `copies` workers gets a
  /// copy (threads, or 1 under Hybrid, whose threads share it); a worker's copy lags
  /// the combined model by `staleness` mini-batches (SSP).
  virtual void begin(Runtime& rt, int copies, int staleness = 0) = 0;
  /// Where worker `w`'s copy keeps the element (or row) at `index`.
  virtual void* locate(int w, std::span<const std::int64_t> index, const std::source_location& where) = 0;
  /// Collective: combines the mini-batch's deltas; `active[w]` says whether worker w
  /// (rank-major, copies per rank) ran iterations in it. Returns the bytes this rank sent.
  virtual std::int64_t sync(Runtime& rt, const std::vector<std::uint8_t>& active) = 0;
  /// A single-process replay of a run on `ranks` ranks, begun with every recorded
  /// worker as a thread: combines the mini-batch as those ranks did.
  virtual void sync_replayed(int ranks, const std::vector<std::uint8_t>& active) = 0;
  /// Collective: the model goes back into the array, each rank keeping its part.
  virtual void end() = 0;
};

}  // namespace detail

/// An array taking part in a sync_for, with how its deltas combine.
template <class T, std::size_t N>
class Synced final : public detail::SyncedBase {
  static_assert(std::is_arithmetic_v<T>, "sync_for combines deltas arithmetically: synced arrays hold numbers");

 public:
  using Function = std::function<T(std::span<const T>)>;

  Synced(DistArray<T, N>& array, Combine combine) : array_(array), combine_(combine) { check_dense(); }
  Synced(DistArray<T, N>& array, Function f) : array_(array), function_(std::move(f)) { check_dense(); }

  std::uint64_t array_id() const override { return array_.array_id(); }

  void begin(Runtime&, int copies, int staleness) override {
    static_cast<detail::ArrayBase&>(array_).travel_begin();  // the whole array, row-major, on every rank
    const auto all = array_.local_values();
    base_.assign(all.begin(), all.end());
    copies_.assign(static_cast<std::size_t>(copies), base_);
    staleness_ = staleness;
    if (staleness_ > 0) starts_ = copies_;
    pending_.clear();
  }

  void* locate(int th, std::span<const std::int64_t> index, const std::source_location& where) override {
    Index<N> i;
    std::copy(index.begin(), index.end(), i.begin());
    if (!in_bounds(i, array_.shape()))
      throw ShapeError(fmt::format("sync_for: {} reads index {} of array {}, outside shape {}", detail::site_label(where),
                                   to_string(i), detail::array_label(array_), to_string(array_.shape())));
    return copies_[static_cast<std::size_t>(th)].data() + linearize(i, array_.shape());
  }

  // SSP: worker deltas are taken from each copy's start of the mini-batch (base_ is
  // the combined model, which the copies see `staleness_` mini-batches late).
  const std::vector<T>& start_of(std::size_t w) const { return staleness_ > 0 ? starts_[w] : base_; }

  std::int64_t sync(Runtime& rt, const std::vector<std::uint8_t>& active) override {
    const int threads = static_cast<int>(copies_.size());
    const std::size_t n = base_.size();
    std::int64_t sent = 0;
    std::vector<T> update(n, T{});
    if (!function_) {
      // Per rank, the threads' deltas summed in thread order; then ranks in rank order.
      std::vector<T> mine(n, T{});
      rt.pool().run([&](int th) {
        const auto [lo, hi] = slice(n, th, rt.threads());
        for (std::size_t e = lo; e < hi; ++e) mine[e] = threads_delta(0, copies_.size(), e);
      });
      if (rt.size() == 1) {
        update = std::move(mine);
      } else {
        const auto all = rt.comm().allgatherv(std::as_bytes(std::span(mine)));
        sent = static_cast<std::int64_t>(n * sizeof(T)) * (rt.size() - 1);
        for (const auto& part : all) {
          const T* d = reinterpret_cast<const T*>(part.data());
          for (std::size_t e = 0; e < n; ++e) update[e] += d[e];
        }
      }
      average(update, active);
    } else {
      // Every active worker's deltas, in worker order, for the user's function.
      std::vector<T> mine(static_cast<std::size_t>(threads) * n);
      for (int t = 0; t < threads; ++t)
        for (std::size_t e = 0; e < n; ++e)
          mine[static_cast<std::size_t>(t) * n + e] =
              copies_[static_cast<std::size_t>(t)][e] - start_of(static_cast<std::size_t>(t))[e];
      std::vector<Bytes> all;
      if (rt.size() == 1) all.emplace_back(reinterpret_cast<const std::byte*>(mine.data()),
                                           reinterpret_cast<const std::byte*>(mine.data() + mine.size()));
      else all = rt.comm().allgatherv(std::as_bytes(std::span(mine)));
      if (rt.size() > 1) sent = static_cast<std::int64_t>(mine.size() * sizeof(T)) * (rt.size() - 1);
      std::vector<const T*> from;
      for (std::size_t w = 0; w < active.size(); ++w)
        if (active[w])
          from.push_back(reinterpret_cast<const T*>(all[w / static_cast<std::size_t>(threads)].data()) +
                         (w % static_cast<std::size_t>(threads)) * n);
      combine_by_function(from, update);
    }
    commit(update);
    return sent;
  }

  void sync_replayed(int ranks, const std::vector<std::uint8_t>& active) override {
    const std::size_t n = base_.size(), per_rank = copies_.size() / static_cast<std::size_t>(ranks);
    std::vector<T> update(n, T{});
    if (!function_) {  // the arithmetic of sync() above, rank by rank
      for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
        for (std::size_t e = 0; e < n; ++e) {
          const T d = threads_delta(r * per_rank, per_rank, e);
          if (ranks == 1) update[e] = d;
          else update[e] += d;
        }
      average(update, active);
    } else {
      std::vector<std::vector<T>> deltas;
      std::vector<const T*> from;
      for (std::size_t w = 0; w < active.size(); ++w)
        if (active[w]) {
          auto& d = deltas.emplace_back(n);
          for (std::size_t e = 0; e < n; ++e) d[e] = copies_[w][e] - start_of(w)[e];
          from.push_back(d.data());
        }
      combine_by_function(from, update);
    }
    commit(update);
  }

  void end() override {
    for (const auto& p : pending_)  // SSP: the combined updates the copies had not yet seen
      for (std::size_t e = 0; e < base_.size(); ++e) base_[e] += p.update[e];
    pending_.clear();
    auto all = array_.local_values();
    std::copy(base_.begin(), base_.end(), all.begin());
    static_cast<detail::ArrayBase&>(array_).travel_drop();
    base_ = {};
    copies_ = {};
    starts_ = {};
  }

 private:
  void check_dense() const {
    if (array_.is_sparse())
      throw OptionError(fmt::format("sync_for: array {} is sparse; only dense arrays can be synced",
                                    detail::array_label(array_)));
  }
  // Element e's delta summed over copies [first, first + count), in order.
  T threads_delta(std::size_t first, std::size_t count, std::size_t e) const {
    T s{};
    for (std::size_t t = first; t < first + count; ++t) s += copies_[t][e] - start_of(t)[e];
    return s;
  }
  void average(std::vector<T>& update, const std::vector<std::uint8_t>& active) const {
    if (combine_ != Combine::average) return;
    const auto workers = static_cast<T>(std::count(active.begin(), active.end(), std::uint8_t{1}));
    if (workers > T{0})
      for (auto& u : update) u /= workers;
  }
  // The user's function over the active workers' deltas (`from`, one array each).
  void combine_by_function(const std::vector<const T*>& from, std::vector<T>& update) const {
    if (from.empty()) return;
    std::vector<T> deltas(from.size());
    for (std::size_t e = 0; e < update.size(); ++e) {
      for (std::size_t k = 0; k < from.size(); ++k) deltas[k] = from[k][e];
      update[e] = function_(std::span<const T>(deltas));
    }
  }
  void commit(const std::vector<T>& update) {
    if (staleness_ == 0) {
      for (std::size_t e = 0; e < base_.size(); ++e) base_[e] += update[e];
      for (auto& c : copies_) std::copy(base_.begin(), base_.end(), c.begin());
      return;
    }
    // SSP: the update waits `staleness_` mini-batches. Once it is due, each copy takes
    // it in place of its own delta of that mini-batch (which the update includes), so
    // a copy is the model combined up to b-s-1 plus the worker's own changes since.
    Pending p{update, {}};
    for (std::size_t w = 0; w < copies_.size(); ++w) {
      auto& d = p.own.emplace_back(base_.size());
      for (std::size_t e = 0; e < base_.size(); ++e) d[e] = copies_[w][e] - starts_[w][e];
    }
    pending_.push_back(std::move(p));
    if (static_cast<int>(pending_.size()) > staleness_) {
      const Pending& due = pending_.front();
      for (std::size_t e = 0; e < base_.size(); ++e) base_[e] += due.update[e];
      for (std::size_t w = 0; w < copies_.size(); ++w)
        for (std::size_t e = 0; e < base_.size(); ++e) copies_[w][e] += due.update[e] - due.own[w][e];
      pending_.pop_front();
    }
    starts_ = copies_;
  }
  static std::pair<std::size_t, std::size_t> slice(std::size_t n, int part, int parts) {
    const auto p = static_cast<std::size_t>(part), P = static_cast<std::size_t>(parts);
    return {n * p / P, n * (p + 1) / P};
  }

  DistArray<T, N>& array_;
  Combine combine_ = Combine::average;
  Function function_;
  std::vector<T> base_;                 // the combined model (BSP: at the start of the mini-batch)
  std::vector<std::vector<T>> copies_;  // per worker (a thread, or a rank under Hybrid)
  // SSP: each copy at the start of its mini-batch, and the combined updates not yet
  // due, each with every worker's own delta of that mini-batch.
  struct Pending {
    std::vector<T> update;
    std::vector<std::vector<T>> own;
  };
  int staleness_ = 0;
  std::vector<std::vector<T>> starts_;
  std::deque<Pending> pending_;
};

/// `array` in a sync_for, its deltas combined by `combine`.
template <class T, std::size_t N>
Synced<T, N> synced(DistArray<T, N>& array, Combine combine = Combine::average) {
  return Synced<T, N>(array, combine);
}
/// `array` in a sync_for, its deltas combined by `f(deltas) -> T`.
template <class T, std::size_t N, class F>
  requires std::is_invocable_r_v<T, F&, std::span<const T>>
Synced<T, N> synced(DistArray<T, N>& array, F f) {
  return Synced<T, N>(array, typename Synced<T, N>::Function(std::move(f)));
}

namespace detail {
/// The engine of sync_for (src/loop/sync_for.cpp). Collective.
SyncReport sync_for_call(const loop::detail::SpaceView& space, const loop::detail::LoopBody& body,
                        const SyncOptions& options, std::vector<SyncedBase*> synced);
}  // namespace detail

/// Runs `body(index, value)` over `space` in mini-batches of `options.batch`
/// iterations per worker, each worker on its own copy of the synced arrays (see the
/// top of this file). This rank's iterations are split among its threads in
/// contiguous runs. Collective.
template <class Elem, std::size_t M, class Body, class... Arrays>
SyncReport sync_for(DistArray<Elem, M>& space, Body&& body, const SyncOptions& options, Arrays&&... arrays) {
  static_assert(sizeof...(Arrays) > 0, "sync_for needs at least one synced array");
  static_assert((std::is_base_of_v<detail::SyncedBase, std::remove_cvref_t<Arrays>> && ...),
                "pass synced arrays as strata::synced(array, ...)");
  return detail::sync_for_call(loop::detail::space_view(space), loop::detail::loop_body<Elem, M>(body), options,
                               {static_cast<detail::SyncedBase*>(&arrays)...});
}

}  // namespace strata
