// The engine of sync_for (strata/sync_for.hpp): mini-batches on every worker, each on
// its own copies of the synced arrays, combined after every batch; and the
// single-process replay of a recorded call.
#include "strata/sync_for.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/loop/call_hooks.hpp"

namespace strata::detail {
namespace {

using loop::detail::index_at;
using loop::detail::ObserverScope;

/// A loop thread's observer in sync_for: synced arrays resolve to the worker's copy
/// (the thread's own, or under Hybrid the rank's).
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

std::vector<std::uint64_t> synced_ids(const std::vector<SyncedBase*>& synced) {
  std::vector<std::uint64_t> ids;
  for (auto* s : synced) ids.push_back(s->array_id());
  std::sort(ids.begin(), ids.end());
  return ids;
}

void check_synced(const loop::detail::SpaceView& space, const SyncOptions& options,
                  const std::vector<SyncedBase*>& synced) {
  if (options.batch < 1)
    throw OptionError(fmt::format("sync_for: the mini-batch must be 1 iteration or more, not {}", options.batch));
  if (options.staleness < 0)
    throw OptionError(fmt::format("sync_for: the staleness must be 0 or more, not {}", options.staleness));
  if (options.hybrid && options.staleness > 0)
    throw OptionError(fmt::format("sync_for: Hybrid is synchronous across ranks, so its staleness is 0, not {}",
                                  options.staleness));
  for (std::size_t a = 0; a < synced.size(); ++a) {
    if (synced[a]->array_id() == space.array->array_id())
      throw OptionError("sync_for: the iteration space cannot also be a synced array");
    for (std::size_t b = 0; b < a; ++b)
      if (synced[a]->array_id() == synced[b]->array_id()) throw OptionError("sync_for: the same array is synced twice");
  }
}

// A single-process replay of a sync_for call: every recorded worker's mini-batches
// on this thread, each on its own copy, combined as the recorded ranks combined them.
SyncReport replay_sync_for(const loop::detail::SpaceView& space, const loop::detail::LoopBody& body,
                          const std::vector<SyncedBase*>& synced) {
  Runtime& rt = *space.rt;
  auto& calls = loop::call_hooks(rt);
  const auto M = static_cast<std::size_t>(space.dims);
  const loop::RecordedCall& rec = calls.expected();
  const loop::RecordedSchedule schedule = calls.schedule(rec, space.dims);
  const int ranks = calls.recorded_ranks(), workers = ranks * calls.recorded_threads();
  std::vector<std::vector<std::uint8_t>> active(static_cast<std::size_t>(schedule.clocks),
                                                std::vector<std::uint8_t>(static_cast<std::size_t>(workers), 0));
  for (std::size_t k = 0; k < schedule.iterations(); ++k)
    active[static_cast<std::size_t>(schedule.row(k)[M + 1])][static_cast<std::size_t>(schedule.row(k)[M])] = 1;
  std::vector<std::unique_ptr<SyncCopies>> copies;
  for (int w = 0; w < workers; ++w) copies.push_back(std::make_unique<SyncCopies>(synced, w));

  SyncReport stats;
  stats.replayed = true;
  for (auto* s : synced) s->begin(rt, workers);
  auto sync_until = [&](std::int64_t batch) {
    for (; stats.batches < batch; ++stats.batches)
      for (auto* s : synced) s->sync_replayed(ranks, active[static_cast<std::size_t>(stats.batches)]);
  };
  try {
    for (std::size_t k = 0; k < schedule.iterations(); ++k) {
      const auto row = schedule.row(k);
      std::byte* value = loop::detail::recorded_element(space, row, rec);
      sync_until(row[M + 1]);
      ObserverScope scope(copies[static_cast<std::size_t>(row[M])].get(), false);
      body.visit(body.body, row.data(), value);
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

}  // namespace

SyncReport sync_for_call(const loop::detail::SpaceView& space, const loop::detail::LoopBody& body,
                        const SyncOptions& options, std::vector<SyncedBase*> synced) {
  Runtime& rt = *space.rt;
  check_synced(space, options, synced);
  auto& calls = loop::call_hooks(rt);
  if (calls.begin(options.where)) {  // resumed: covered by the checkpoint
    SyncReport skipped;
    skipped.skipped = true;
    return skipped;
  }
  if (calls.replaying_serially()) {
    if (options.hybrid || options.staleness > 0)
      throw ReplayError("sync_for: a single-process replay plays BSP mini-batches only, not SSP or Hybrid ones");
    return replay_sync_for(space, body, synced);
  }
  const int T = rt.threads();
  const int copies = options.hybrid ? 1 : T;  // Hybrid: the rank's threads share one copy
  const std::int64_t n = space.local_nnz;
  std::vector<std::int64_t> lo(static_cast<std::size_t>(T) + 1);
  for (int t = 0; t <= T; ++t) lo[static_cast<std::size_t>(t)] = n * t / T;
  const std::int64_t most = rt.comm().allreduce((n + T - 1) / T, ReduceOp::max);
  const std::int64_t batches = (most + options.batch - 1) / options.batch;

  SyncReport stats;
  for (auto* s : synced) s->begin(rt, copies, options.staleness);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(T));
  for (std::int64_t b = 0; b < batches; ++b) {
    auto start = std::chrono::steady_clock::now();
    rt.pool().run([&](int th) {
      SyncCopies mine(synced, options.hybrid ? 0 : th);
      ObserverScope scope(&mine, false);
      WorkerScope worker(th);
      std::int64_t index[4];
      try {
        const std::int64_t from = lo[static_cast<std::size_t>(th)] + b * options.batch;
        const std::int64_t to = std::min(lo[static_cast<std::size_t>(th) + 1], from + options.batch);
        for (std::int64_t pos = from; pos < to && !errors[static_cast<std::size_t>(th)]; ++pos) {
          index_at(space, pos, index);
          body.visit(body.body, index, space.values + static_cast<std::size_t>(pos) * space.elem_size);
        }
      } catch (...) {
        errors[static_cast<std::size_t>(th)] = std::current_exception();
      }
    });
    stats.compute_seconds += seconds_since(start);
    // A failed worker fails the call on every rank, after the model is put back.
    const bool failed = std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e != nullptr; });
    if (rt.comm().allreduce(static_cast<std::int32_t>(failed), ReduceOp::max) != 0) {
      for (auto* s : synced) s->end();
      for (auto& e : errors)
        if (e) std::rethrow_exception(e);
      throw Error("sync_for: a worker on another rank failed (its rank reports the error)");
    }
    start = std::chrono::steady_clock::now();
    std::vector<std::uint8_t> mine(static_cast<std::size_t>(copies), 0);
    for (int th = 0; th < T; ++th)
      mine[static_cast<std::size_t>(options.hybrid ? 0 : th)] |=
          lo[static_cast<std::size_t>(th)] + b * options.batch < lo[static_cast<std::size_t>(th) + 1];
    std::vector<std::uint8_t> active;
    for (const auto& part : rt.comm().allgatherv(std::as_bytes(std::span(mine))))
      for (const auto byte : part) active.push_back(static_cast<std::uint8_t>(byte));
    for (auto* s : synced) stats.bytes_sent += s->sync(rt, active);
    stats.sync_seconds += seconds_since(start);
    ++stats.batches;
  }
  for (auto* s : synced) s->end();
  loop::CallOutcome outcome{synced_ids(synced), {}, 0, {}};
  if (calls.recording()) {
    std::vector<std::int64_t> mine;
    std::int64_t index[4];
    for (int th = 0; th < T; ++th)
      for (std::int64_t pos = lo[static_cast<std::size_t>(th)]; pos < lo[static_cast<std::size_t>(th) + 1]; ++pos) {
        const std::int64_t seq = pos - lo[static_cast<std::size_t>(th)];
        index_at(space, pos, index);
        mine.insert(mine.end(), {seq / options.batch, rt.rank() * T + th, seq});
        mine.insert(mine.end(), index, index + space.dims);
      }
    const auto schedule =
        loop::detail::to_recorded(loop::detail::gather_schedule(rt, std::move(mine), space.dims), space.dims, batches);
    // Calls with the same schedule share its file.
    const std::uint64_t key = (std::uint64_t{1} << 63) |
                              (loop::fingerprint(std::as_bytes(std::span(schedule.rows))) ^ static_cast<std::uint64_t>(batches));
    outcome.order = calls.order_of(key);
    if (outcome.order == 0) outcome.order = calls.write_order(key, schedule);
  }
  calls.end(outcome);
  return stats;
}

}  // namespace strata::detail
