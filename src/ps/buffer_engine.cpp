// A Buffer's owner side on bytes, as the loop engine and recovery see it
// (detail::BufferBase): the bulk flush after a loop, the owners' apply state in
// checkpoints, and single-process replay.
#include <cmath>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ps/ps_internal.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace strata::ps {

BufferEngine::BufferEngine(detail::ArrayBase& target, Runtime& rt, ElementOps& ops,
                           const std::optional<Consistency>& relaxed)
    : detail::BufferBase(target.array_id()), target_(target), rt_(rt), ops_(ops) {
  if (relaxed) table_ = std::make_unique<Table>(target, rt, ops, *this, *relaxed);
}

BufferEngine::~BufferEngine() = default;

detail::RelaxedBase* BufferEngine::relaxed() { return table_.get(); }

RelaxedStats BufferEngine::stats() const { return table_ ? table_->stats() : RelaxedStats{}; }

// Every rank's sums travel to the elements' owners, which fold them in one source
// rank at a time, in rank order (so a run is reproducible for a given number of
// ranks and threads), as one apply round.
void BufferEngine::flush() {
  const Geometry g = Geometry::of(target_, ops_);
  const auto received = rt_.comm().alltoallv(pack_for_owners(ops_, g, rt_.size(), {}));
  ops_.prepare_apply();
  const std::int64_t round = reserve_rounds(1);
  for (const auto& from : received)  // rank order
    for_record_runs(ops_, g, from, [&](const OwnedRun& r) { ops_.apply(r.offsets, r.deltas, r.stride, r.n, round); });
}

detail::CheckpointSnapshot BufferEngine::owner_state_snapshot(Bytes storage) {
  if (!ops_.has_state()) return BufferBase::owner_state_snapshot(std::move(storage));
  return ops_.state_snapshot(std::move(storage));
}

std::function<void()> BufferEngine::stage_owner_state(const std::filesystem::path& dir, std::int64_t rounds) {
  if (!ops_.has_state()) return [this, rounds] { rounds_ = rounds; };
  auto put = ops_.stage_state(dir);
  return [this, put, rounds] {
    put();
    rounds_ = rounds;
  };
}

void BufferEngine::replay_begin(int workers) { ops_.reset_sets(static_cast<std::size_t>(workers)); }

std::int64_t BufferEngine::replay_reserve(std::int64_t n) {
  ops_.prepare_apply();
  return reserve_rounds(n);
}

void BufferEngine::replay_apply(int ranks, std::int64_t round) {
  const Geometry g = Geometry::of(target_, ops_);
  const std::size_t per_rank = ops_.set_count() / static_cast<std::size_t>(ranks);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
    for_drained_runs(ops_, g, r * per_rank, per_rank, 0, 1,
                     [&](const OwnedRun& run) { ops_.apply(run.offsets, run.deltas, run.stride, run.n, round); });
}

void BufferEngine::replay_apply_logged(std::span<const std::span<const std::byte>> applies, std::int64_t first_round,
                                       const std::string& call) {
  STRATA_CHECK(ops_.arithmetic, "managed communication needs arithmetic elements");
  const Geometry g = Geometry::of(target_, ops_);
  const std::size_t elem = ops_.element_size;
  // Per element: the sums recomputed by the replayed workers and logged at the
  // owners, and the sum of magnitudes of both, which bounds their rounding.
  struct Sums {
    double recomputed = 0, logged = 0, magnitude = 0;
    bool in_log = false, in_sets = false;
  };
  std::unordered_map<std::int64_t, Sums> sums;
  std::vector<double> d;
  for_drained_runs(ops_, g, 0, 0, 0, 1, [&](const OwnedRun& run) {
    d.resize(run.n);
    ops_.to_doubles(run.deltas, run.stride, run.n, d.data());
    for (std::size_t j = 0; j < run.n; ++j) {
      Sums& s = sums[run.keys[j]];
      s.recomputed += d[j];
      s.magnitude += std::abs(d[j]);
      s.in_sets = true;
    }
  });
  const std::size_t entry = 2 * sizeof(std::int64_t) + elem;
  auto each_logged = [&](auto&& f) {
    for (const auto& from : applies)
      for (std::size_t at = 0; at + entry <= from.size(); at += entry) {
        std::int64_t key, clock;
        std::memcpy(&key, from.data() + at, sizeof key);
        std::memcpy(&clock, from.data() + at + sizeof key, sizeof clock);
        f(key, clock, from.data() + at + 2 * sizeof key);
      }
  };
  const std::int64_t elements = g.volume();
  auto label = [&] { return detail::array_label(target_); };
  auto shape = [&] { return fmt::format("({})", fmt::join(g.shape, ", ")); };
  each_logged([&](std::int64_t key, std::int64_t, const std::byte* delta) {
    if (key < 0 || key >= elements)
      throw ReplayError(fmt::format("replay of {}: the timing log of {} applies a delta to element {}, outside "
                                    "shape {}",
                                    call, label(), key, shape()));
    double v;
    ops_.to_doubles(delta, elem, 1, &v);
    Sums& s = sums[key];
    s.logged += v;
    s.magnitude += std::abs(v);
    s.in_log = true;
  });
  // Sums of the same deltas in another grouping differ by a few units of the
  // element's precision times their magnitude; a changed program differs by far more.
  const double tolerance = ops_.integral ? 0.0 : 1e-3;
  for (const auto& [k, s] : sums)
    if (s.in_log != s.in_sets || std::abs(s.recomputed - s.logged) > tolerance * s.magnitude) {
      std::int64_t index[kMaxDims];
      g.index_of(k, index);
      throw ReplayError(fmt::format("replay of {}: the replayed workers' deltas to element ({}) of {} sum to {}, "
                                    "the deltas its owner applied in the recorded run to {}{}",
                                    call, fmt::join(std::span(index, g.dims), ", "), label(), s.recomputed,
                                    s.logged, s.in_log ? "" : " (it applied none)"));
    }
  each_logged([&](std::int64_t key, std::int64_t clock, const std::byte* delta) {
    const std::int64_t off = g.local_offset_of(key);
    STRATA_CHECK(off >= 0, "a buffered delta reached a rank that does not own its element");
    ops_.apply(&off, delta, elem, 1, first_round + clock);
  });
}

void BufferEngine::replay_end() { ops_.reset_sets(static_cast<std::size_t>(rt_.threads())); }

void BufferEngineDelete::operator()(BufferEngine* e) const { delete e; }

BufferEngineHandle make_buffer_engine(detail::ArrayBase& target, Runtime& rt, ElementOps& ops,
                                      const std::optional<Consistency>& relaxed) {
  return BufferEngineHandle(new BufferEngine(target, rt, ops, relaxed));
}

void flush(BufferEngine& engine) { engine.flush(); }

RelaxedStats stats(const BufferEngine& engine) { return engine.stats(); }

}  // namespace strata::ps
