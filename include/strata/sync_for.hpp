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
// whole model during the loop. A body that throws fails the call on every rank (the
// others with an Error saying so); the model keeps every mini-batch completed before
// it. Collective.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "strata/detail/pack.hpp"
#include "strata/detail/stopwatch.hpp"
#include "strata/dist_array.hpp"
#include "strata/loop/plan.hpp"
#include "strata/loop/reconnoitre.hpp"
#include "strata/loop/schedule_record.hpp"
#include "strata/recovery/loop_calls.hpp"
#include "strata/loop/worker.hpp"

namespace strata {

/// How one mini-batch's per-worker deltas of an element become the model's update.
enum class Combine { average, sum };

struct SyncOptions {
  std::int64_t batch = 64;  ///< iterations per worker per mini-batch
  /// Where the call is (taken where the options are written, i.e. at the call): it
  /// names the loop call for checkpoints and resuming (strata/recovery).
  std::source_location where = std::source_location::current();
};

/// What one sync_for call did (the same on every rank).
struct SyncStats {
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
  /// Collective: every rank takes the whole array; each of `threads` gets a copy.
  virtual void begin(Runtime& rt, int threads) = 0;
  /// Where thread `th`'s copy keeps the element (or row) at `index`.
  virtual void* locate(int th, std::span<const std::int64_t> index, const std::source_location& where) = 0;
  /// Collective: combines the mini-batch's deltas; `active[w]` says whether worker w
  /// (rank-major) ran iterations in it. Returns the bytes this rank sent.
  virtual std::int64_t sync(Runtime& rt, const std::vector<std::uint8_t>& active) = 0;
  /// A single-process replay of a run on `ranks` ranks, begun with every recorded
  /// worker as a thread: combines the mini-batch as those ranks did.
  virtual void sync_replayed(int ranks, const std::vector<std::uint8_t>& active) = 0;
  /// Collective: the model goes back into the array, each rank keeping its part.
  virtual void end() = 0;
};

/// A loop thread's observer in sync_for: synced arrays resolve to the thread's copy.
class SyncCopies final : public AccessObserver {
 public:
  SyncCopies(const std::vector<SyncedBase*>& synced, int thread) : synced_(synced), thread_(thread) {}
  void* on_access(ArrayBase& array, const std::source_location& where, AccessMode mode,
                  std::span<const std::int64_t> index, bool, void*, std::size_t) override {
    for (auto* s : synced_)
      if (s->array_id() == array.array_id()) return s->locate(thread_, index, where);
    if (mode == AccessMode::write || mode == AccessMode::read_write)
      throw OptionError(fmt::format("sync_for: {} writes array {}, which is not synced; pass it as "
                                    "strata::synced({}) or write it through a Buffer",
                                    site_label(where), array_label(array), array_label(array)));
    return nullptr;  // reads of other arrays, Buffer writes: as usual
  }

 private:
  const std::vector<SyncedBase*>& synced_;
  int thread_;
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

  void begin(Runtime&, int threads) override {
    array_.travel_begin();  // the whole array, row-major, on every rank
    const auto all = array_.local_values();
    base_.assign(all.begin(), all.end());
    copies_.assign(static_cast<std::size_t>(threads), base_);
  }

  void* locate(int th, std::span<const std::int64_t> index, const std::source_location& where) override {
    Index<N> i;
    std::copy(index.begin(), index.end(), i.begin());
    if (!in_bounds(i, array_.shape()))
      throw ShapeError(fmt::format("sync_for: {} reads index {} of array {}, outside shape {}", detail::site_label(where),
                                   to_string(i), detail::array_label(array_), to_string(array_.shape())));
    return copies_[static_cast<std::size_t>(th)].data() + linearize(i, array_.shape());
  }

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
          mine[static_cast<std::size_t>(t) * n + e] = copies_[static_cast<std::size_t>(t)][e] - base_[e];
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
          for (std::size_t e = 0; e < n; ++e) d[e] = copies_[w][e] - base_[e];
          from.push_back(d.data());
        }
      combine_by_function(from, update);
    }
    commit(update);
  }

  void end() override {
    auto all = array_.local_values();
    std::copy(base_.begin(), base_.end(), all.begin());
    array_.travel_drop();
    base_ = {};
    copies_ = {};
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
    for (std::size_t t = first; t < first + count; ++t) s += copies_[t][e] - base_[e];
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
    for (std::size_t e = 0; e < base_.size(); ++e) base_[e] += update[e];
    for (auto& c : copies_) std::copy(base_.begin(), base_.end(), c.begin());
  }
  static std::pair<std::size_t, std::size_t> slice(std::size_t n, int part, int parts) {
    const auto p = static_cast<std::size_t>(part), P = static_cast<std::size_t>(parts);
    return {n * p / P, n * (p + 1) / P};
  }

  DistArray<T, N>& array_;
  Combine combine_ = Combine::average;
  Function function_;
  std::vector<T> base_;                 // the model at the start of the mini-batch
  std::vector<std::vector<T>> copies_;  // per thread
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

inline std::vector<std::uint64_t> synced_ids(const std::vector<SyncedBase*>& synced) {
  std::vector<std::uint64_t> ids;
  for (auto* s : synced) ids.push_back(s->array_id());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A single-process replay of a sync_for call: every recorded worker's mini-batches
// on this thread, each on its own copy, combined as the recorded ranks combined them.
template <class Elem, std::size_t M, class Body>
SyncStats replay_sync_for(DistArray<Elem, M>& space, Body& body, const std::vector<SyncedBase*>& synced) {
  Runtime& rt = space.runtime();
  auto& calls = rt.loop_calls();
  const recovery::RecordedCall& rec = calls.expected();
  const recovery::RecordedSchedule schedule = calls.record().schedule(rec, static_cast<int>(M));
  const int ranks = calls.record().recorded_ranks(), workers = ranks * calls.record().recorded_threads();
  std::vector<std::vector<std::uint8_t>> active(static_cast<std::size_t>(schedule.clocks),
                                                std::vector<std::uint8_t>(static_cast<std::size_t>(workers), 0));
  for (std::size_t k = 0; k < schedule.iterations(); ++k)
    active[static_cast<std::size_t>(schedule.row(k)[M + 1])][static_cast<std::size_t>(schedule.row(k)[M])] = 1;
  std::vector<std::unique_ptr<SyncCopies>> copies;
  for (int w = 0; w < workers; ++w) copies.push_back(std::make_unique<SyncCopies>(synced, w));

  SyncStats stats;
  for (auto* s : synced) s->begin(rt, workers);
  auto sync_until = [&](std::int64_t batch) {
    for (; stats.batches < batch; ++stats.batches)
      for (auto* s : synced) s->sync_replayed(ranks, active[static_cast<std::size_t>(stats.batches)]);
  };
  try {
    for (std::size_t k = 0; k < schedule.iterations(); ++k) {
      const auto row = schedule.row(k);
      const auto [i, value] = loop::detail::recorded_iteration(space, row, rec);
      sync_until(row[M + 1]);
      loop::detail::ObserverScope scope(copies[static_cast<std::size_t>(row[M])].get(), false);
      body(i, *value);
    }
    sync_until(schedule.clocks);
  } catch (...) {
    for (auto* s : synced) s->end();
    throw;
  }
  for (auto* s : synced) s->end();
  calls.end({synced_ids(synced), {}, rec.order, {}});
  return stats;
}

}  // namespace detail

/// Runs `body(index, value)` over `space` in mini-batches of `options.batch`
/// iterations per worker, each worker on its own copy of the synced arrays (see the
/// top of this file). This rank's iterations are split among its threads in
/// contiguous runs. Collective.
template <class Elem, std::size_t M, class Body, class... Arrays>
SyncStats sync_for(DistArray<Elem, M>& space, Body&& body, const SyncOptions& options, Arrays&&... arrays) {
  static_assert(sizeof...(Arrays) > 0, "sync_for needs at least one synced array");
  static_assert((std::is_base_of_v<detail::SyncedBase, std::remove_cvref_t<Arrays>> && ...),
                "pass synced arrays as strata::synced(array, ...)");
  Runtime& rt = space.runtime();
  if (options.batch < 1)
    throw OptionError(fmt::format("sync_for: the mini-batch must be 1 iteration or more, not {}", options.batch));
  std::vector<detail::SyncedBase*> synced{static_cast<detail::SyncedBase*>(&arrays)...};
  for (std::size_t a = 0; a < synced.size(); ++a) {
    if (synced[a]->array_id() == space.array_id())
      throw OptionError("sync_for: the iteration space cannot also be a synced array");
    for (std::size_t b = 0; b < a; ++b)
      if (synced[a]->array_id() == synced[b]->array_id())
        throw OptionError("sync_for: the same array is synced twice");
  }
  if (rt.loop_calls().begin(options.where)) return SyncStats{};  // resumed: covered by the checkpoint
  if (rt.loop_calls().replaying_serially()) return detail::replay_sync_for(space, body, synced);
  const int T = rt.threads();
  const auto values = space.local_values();
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<std::int64_t> lo(static_cast<std::size_t>(T) + 1);
  for (int t = 0; t <= T; ++t) lo[static_cast<std::size_t>(t)] = n * t / T;
  const std::int64_t most = rt.comm().allreduce((n + T - 1) / T, ReduceOp::max);
  const std::int64_t batches = (most + options.batch - 1) / options.batch;

  SyncStats stats;
  for (auto* s : synced) s->begin(rt, T);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(T));
  for (std::int64_t b = 0; b < batches; ++b) {
    auto start = std::chrono::steady_clock::now();
    rt.pool().run([&](int th) {
      detail::SyncCopies copies(synced, th);
      loop::detail::ObserverScope scope(&copies, false);
      detail::WorkerScope worker(th);
      try {
        const std::int64_t from = lo[static_cast<std::size_t>(th)] + b * options.batch;
        const std::int64_t to = std::min(lo[static_cast<std::size_t>(th) + 1], from + options.batch);
        for (std::int64_t pos = from; pos < to && !errors[static_cast<std::size_t>(th)]; ++pos)
          body(loop::detail::index_at(space, pos), values[static_cast<std::size_t>(pos)]);
      } catch (...) {
        errors[static_cast<std::size_t>(th)] = std::current_exception();
      }
    });
    stats.compute_seconds += detail::seconds_since(start);
    // A failed worker fails the call on every rank, after the model is put back.
    const bool failed = std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e != nullptr; });
    if (rt.comm().allreduce(static_cast<std::int32_t>(failed), ReduceOp::max) != 0) {
      for (auto* s : synced) s->end();
      for (auto& e : errors)
        if (e) std::rethrow_exception(e);
      throw Error("sync_for: a worker on another rank failed (its rank reports the error)");
    }
    start = std::chrono::steady_clock::now();
    std::vector<std::uint8_t> mine(static_cast<std::size_t>(T));
    for (int th = 0; th < T; ++th)
      mine[static_cast<std::size_t>(th)] = lo[static_cast<std::size_t>(th)] + b * options.batch <
                                           lo[static_cast<std::size_t>(th) + 1];
    std::vector<std::uint8_t> active;
    for (const auto& part : rt.comm().allgatherv(std::as_bytes(std::span(mine))))
      for (const auto byte : part) active.push_back(static_cast<std::uint8_t>(byte));
    for (auto* s : synced) stats.bytes_sent += s->sync(rt, active);
    stats.sync_seconds += detail::seconds_since(start);
    ++stats.batches;
  }
  for (auto* s : synced) s->end();
  recovery::CallOutcome outcome{detail::synced_ids(synced), {}, 0, {}};
  if (rt.loop_calls().recording()) {
    std::vector<loop::detail::ScheduledIteration<M>> mine;
    for (int th = 0; th < T; ++th)
      for (std::int64_t pos = lo[static_cast<std::size_t>(th)]; pos < lo[static_cast<std::size_t>(th) + 1]; ++pos) {
        const std::int64_t seq = pos - lo[static_cast<std::size_t>(th)];
        mine.push_back({seq / options.batch, rt.rank() * T + th, seq, loop::detail::index_at(space, pos)});
      }
    const auto schedule = loop::detail::to_recorded(loop::detail::gather_schedule(rt, mine), batches);
    // Calls with the same schedule share its file.
    const std::uint64_t key = (std::uint64_t{1} << 63) |
                              (loop::fingerprint(std::as_bytes(std::span(schedule.rows))) ^ static_cast<std::uint64_t>(batches));
    outcome.order = rt.loop_calls().record().order_of(key);
    if (outcome.order == 0) outcome.order = rt.loop_calls().record().write_order(key, schedule);
  }
  rt.loop_calls().end(outcome);
  return stats;
}

}  // namespace strata
