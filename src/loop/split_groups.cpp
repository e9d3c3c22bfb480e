#include "strata/detail/free_now.hpp"
#include "loop/split_groups.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "loop/checked.hpp"
#include "loop/loop_internal.hpp"

namespace strata::loop {

namespace {
constexpr std::uint64_t kOutOfOrder = std::uint64_t{1} << 63;  // in SplitGroups::waiting
}  // namespace

void SplitGroups::arrange(const std::vector<std::vector<std::vector<std::uint32_t>>>& work) {
  lanes.assign(work.size(), Lane{});
  for (std::size_t th = 0; th < work.size(); ++th) {
    Lane& lane = lanes[th];
    static const std::vector<std::uint32_t> none;
    for (const std::uint32_t pos : work[th].empty() ? none : work[th][0]) {
      lane.units.insert(lane.units.end(), units_by_position.begin() + static_cast<std::ptrdiff_t>(offsets_by_position[pos]),
                        units_by_position.begin() + static_cast<std::ptrdiff_t>(offsets_by_position[pos + 1]));
      lane.offsets.push_back(lane.units.size());
    }
    lane.ticket.assign(lane.offsets.size() - 1, -1);
  }
  strata::detail::free_now(offsets_by_position);
  strata::detail::free_now(units_by_position);
}

void SplitGroups::reset(int threads) {
  for (auto& lane : lanes) std::fill(lane.ticket.begin(), lane.ticket.end(), -1);
  workers = static_cast<std::size_t>(threads);
  if (!waiting) waiting = std::make_unique<std::atomic<std::uint64_t>[]>(workers);
  for (std::size_t w = 0; w < workers; ++w) waiting[w].store(0, std::memory_order_relaxed);
}

namespace {

// Whether `plan` may split groups on this rank: several threads, a table to lock in
// whose units fit the 32-bit lock lists, the unit of every access, no relaxed arrays
// (their clocks have their own order) and no ordered loop (splitting reorders).
bool may_split(const Plan& plan, std::size_t accesses, const std::vector<std::uint64_t>& units) {
  return plan.threads > 1 && plan.ownership && units.size() == accesses && !plan.ordered &&
         plan.ownership->units() < std::numeric_limits<std::uint32_t>::max() &&
         detail::relaxed_arrays(plan).empty();
}

// Places the iterations of split groups on the threads (`load`: each thread's
// iterations so far; `thread_of` gets theirs) and returns how many there are.
// Each such iteration has a *pivot*: of the units it writes, the one the most of these
// iterations write (TransE: its relation row; ties: the lower unit). Iterations that
// share a pivot go to one thread as far as its fair share (ceil(iterations / T))
// allows, pivots with the most iterations first, each onto the least-loaded thread,
// the rest of a pivot's iterations (in key order) onto the next. A hot unit then stays
// in one core's cache and its lock is rarely contended, where iterations dealt one by
// one made the threads take turns on every hot row (docs/loops.md, "Split groups").
// Iterations that write no unit come last, one at a time.
template <class InSplit>
std::int64_t place_split_iterations(std::int64_t iterations, const std::vector<analysis::ElementAccess>& accesses,
                                    const std::vector<std::uint64_t>& units, const InSplit& in_split,
                                    std::vector<std::int64_t>& load, std::vector<std::int32_t>& thread_of) {
  // (unit, iteration) for each unit a split iteration writes, once.
  std::vector<std::pair<std::uint64_t, std::int64_t>> writes;
  for (std::size_t k = 0; k < accesses.size(); ++k)
    if (accesses[k].write && units[k] != OwnershipTable::kNoUnit && in_split(accesses[k].iteration))
      writes.emplace_back(units[k], accesses[k].iteration);
  std::sort(writes.begin(), writes.end());
  writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
  constexpr std::uint64_t kNone = OwnershipTable::kNoUnit;
  std::vector<std::uint64_t> pivot(static_cast<std::size_t>(iterations), kNone);
  std::vector<std::int64_t> pivot_count(static_cast<std::size_t>(iterations), 0);
  for (std::size_t b = 0, e; b < writes.size(); b = e) {
    for (e = b; e < writes.size() && writes[e].first == writes[b].first;) ++e;
    const auto count = static_cast<std::int64_t>(e - b);
    for (std::size_t k = b; k < e; ++k) {
      const auto i = static_cast<std::size_t>(writes[k].second);
      if (count > pivot_count[i]) pivot_count[i] = count, pivot[i] = writes[k].first;
    }
  }
  strata::detail::free_now(writes);
  // The split iterations by pivot (kNone last), in key order within a pivot.
  std::vector<std::pair<std::uint64_t, std::int64_t>> by_pivot;
  for (std::int64_t i = 0; i < iterations; ++i)
    if (in_split(i)) by_pivot.emplace_back(pivot[static_cast<std::size_t>(i)], i);
  std::sort(by_pivot.begin(), by_pivot.end());
  struct Run {
    std::size_t begin, end;
  };
  std::vector<Run> runs;
  for (std::size_t b = 0, e; b < by_pivot.size(); b = e) {
    for (e = b + 1; e < by_pivot.size() && by_pivot[e].first == by_pivot[b].first && by_pivot[b].first != kNone;) ++e;
    runs.push_back({b, e});
  }
  std::stable_sort(runs.begin(), runs.end(), [&](const Run& a, const Run& b) {
    const bool a_none = by_pivot[a.begin].first == kNone, b_none = by_pivot[b.begin].first == kNone;
    if (a_none != b_none) return b_none;
    return a.end - a.begin > b.end - b.begin;
  });
  const auto T = static_cast<std::int64_t>(load.size());
  const std::int64_t fair = (iterations + T - 1) / T;
  using Load = std::pair<std::int64_t, std::int32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> least;  // lower id on ties
  for (std::int32_t w = 0; w < static_cast<std::int32_t>(T); ++w) least.push({load[static_cast<std::size_t>(w)], w});
  for (auto [next, end] : runs)
    while (next < end) {
      auto [l, w] = least.top();
      least.pop();
      // The threads together have room for every iteration left, so the least loaded has some.
      const auto take = static_cast<std::size_t>(std::max<std::int64_t>(1, fair - l));
      const std::size_t stop = std::min(end, next + take);
      load[static_cast<std::size_t>(w)] += static_cast<std::int64_t>(stop - next);
      for (; next < stop; ++next) thread_of[static_cast<std::size_t>(by_pivot[next].second)] = w;
      least.push({load[static_cast<std::size_t>(w)], w});
    }
  return static_cast<std::int64_t>(by_pivot.size());
}

}  // namespace

std::vector<std::int32_t> place_groups(Plan& plan, std::int64_t iterations,
                                       const std::vector<analysis::ElementAccess>& accesses,
                                       const std::vector<std::uint64_t>& units) {
  const auto g = analysis::conflict_groups(iterations, accesses);
  const int T = plan.threads;
  plan.groups = g.count;
  std::vector<std::uint8_t> split(static_cast<std::size_t>(g.count), 0);
  std::int64_t split_groups = 0;
  if (may_split(plan, accesses.size(), units)) {
    const double share = static_cast<double>(iterations) / T;
    for (std::int32_t k = 0; k < g.count; ++k)
      if (static_cast<double>(g.group_size[static_cast<std::size_t>(k)]) > kSplitAbove * share) {
        split[static_cast<std::size_t>(k)] = 1;
        ++split_groups;
      }
  }
  // Whole groups largest first onto the least-loaded thread; then the split groups'
  // iterations by their pivots (place_split_iterations).
  std::vector<std::int64_t> whole = g.group_size;
  for (std::size_t k = 0; k < whole.size(); ++k)
    if (split[k]) whole[k] = 0;
  const auto worker_of = analysis::pack_groups(whole, T);
  std::vector<std::int64_t> load(static_cast<std::size_t>(T), 0);
  for (std::size_t k = 0; k < whole.size(); ++k) load[static_cast<std::size_t>(worker_of[k])] += whole[k];
  auto in_split = [&](std::int64_t i) {
    return split[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(i)])] != 0;
  };
  std::vector<std::int32_t> thread_of(static_cast<std::size_t>(iterations));
  for (std::int64_t i = 0; i < iterations; ++i)
    if (const auto group = static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(i)]); !split[group])
      thread_of[static_cast<std::size_t>(i)] = worker_of[group];
  const std::int64_t split_iterations =
      split_groups == 0 ? 0 : place_split_iterations(iterations, accesses, units, in_split, load, thread_of);
  const std::int64_t most = *std::max_element(load.begin(), load.end());
  plan.imbalance = iterations > 0 ? static_cast<double>(most) * T / static_cast<double>(iterations) : 1.0;
  if (split_groups == 0) return thread_of;

  // Lockable: every unit of the arrays an iteration of a split group writes (a unit
  // no recorded iteration wrote may be written at a later call, when subscripts
  // moved). An iteration locks the others it reaches as it reaches them.
  std::vector<std::uint32_t> written;
  for (std::size_t k = 0; k < accesses.size(); ++k)
    if (accesses[k].write && units[k] != OwnershipTable::kNoUnit && in_split(accesses[k].iteration))
      written.push_back(static_cast<std::uint32_t>(units[k]));
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  plan.ownership->make_arrays_lockable(written);
  // Every iteration takes the lockable units it recorded first, in unit order: those
  // of whole groups too (two of them may read one unit in opposite orders).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> locks;  // (position, unit)
  for (std::size_t k = 0; k < accesses.size(); ++k)
    if (units[k] != OwnershipTable::kNoUnit && plan.ownership->lockable(units[k]))
      locks.emplace_back(static_cast<std::uint32_t>(accesses[k].iteration), static_cast<std::uint32_t>(units[k]));
  std::sort(locks.begin(), locks.end());
  locks.erase(std::unique(locks.begin(), locks.end()), locks.end());
  plan.split_groups = split_groups;
  plan.split_iterations = split_iterations;
  auto s = std::make_shared<SplitGroups>();
  auto& offsets = s->offsets_by_position;
  offsets.assign(static_cast<std::size_t>(iterations) + 1, 0);
  for (const auto& [pos, unit] : locks) ++offsets[pos + 1];
  for (std::size_t p = 0; p < static_cast<std::size_t>(iterations); ++p) offsets[p + 1] += offsets[p];
  s->units_by_position.reserve(locks.size());
  for (const auto& [pos, unit] : locks) s->units_by_position.push_back(unit);
  plan.split = std::move(s);
  return thread_of;
}

SplitLocks::SplitLocks(SplitGroups& split, OwnershipTable& table, std::size_t from, int worker,
                       const std::atomic<bool>& abandoned)
    : split_(split),
      lane_(split.lanes[static_cast<std::size_t>(worker)]),
      table_(table),
      next_(from),
      worker_(worker),
      abandoned_(abandoned) {}

// Giving way (lock: deadlock) drops every lock taken so far, waits until the worker
// it gave way to has its unit (else it could take it back first, again and again),
// and starts again.
void SplitLocks::begin_iteration() {
  k_ = next_++;
  first_ = lane_.offsets[k_];
  const std::uint64_t hi = lane_.offsets[k_ + 1];
  for (;;) {
    std::uint64_t k = first_;
    for (; k < hi; ++k)
      if (lane_.units[k] != SplitGroups::kDropped && !lock(lane_.units[k], false)) break;
    if (k == hi) return;
    release();
    const auto& theirs = split_.waiting[static_cast<std::size_t>(gave_way_to_)];
    while (theirs.load(std::memory_order_seq_cst) == gave_way_for_) {
      if (abandoned_.load(std::memory_order_relaxed)) throw RunAbandoned{};
      std::this_thread::yield();
    }
  }
}

// Units locked but never touched impose no order: they go first, and leave the
// iteration's list of recorded locks.
void SplitLocks::end_iteration() {
  std::size_t touched = 0;
  for (const std::uint32_t u : held_)
    if (table_.touched_by(u, worker_)) {
      held_[touched++] = u;
    } else {
      table_.unlock(u);
      drop(u);
    }
  held_.resize(touched);
  if (held_.empty()) return;
  std::int64_t t = last_ticket_ + 1;
  for (const std::uint32_t u : held_) t = std::max(t, table_.clock(u) + 1);
  lane_.ticket[k_] = last_ticket_ = t;
  for (const std::uint32_t u : held_) table_.unlock_touched(u, t);
  held_.clear();
}

void SplitLocks::drop(std::uint32_t unit) {
  const std::uint64_t hi = lane_.offsets[k_ + 1];
  for (std::uint64_t k = first_; k < hi; ++k)
    if (lane_.units[k] == unit) lane_.units[k] = SplitGroups::kDropped;
}

bool SplitLocks::lock_extra(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                            bool whole_last) {
  const std::uint64_t unit = table_.unit_of(array, index, whole_last);
  if (unit == OwnershipTable::kNoUnit || !table_.lockable(unit)) return false;
  if (lock(static_cast<std::uint32_t>(unit), true)) return true;
  throw SpeculationFailed(fmt::format("access {} (of an array a split group writes) was not recorded when the loop "
                                      "was planned, and waiting for its lock would deadlock",
                                      shown(array, index, whole_last)));
}

// Deadlock: waits in unit order alone form no cycle, so every cycle of waiting
// workers has a wait out of order (an access the iteration did not record, in the
// middle of its body). A worker waiting in unit order has run nothing of its
// iteration yet: it gives way (false: begin_iteration drops its locks and starts
// again) as soon as a wait out of order is for a unit it holds. So in a cycle that
// remains every worker waits out of order inside its body: nothing can move, and the
// access is refused (the run is undone and planned again).
bool SplitLocks::lock(std::uint32_t unit, bool out_of_order) {
  // Recorded locks start untouched (end_iteration drops those never touched); a lock
  // out of order is taken for the access that follows.
  const bool touched = out_of_order;
  if (table_.try_lock(unit, worker_, touched)) {
    held_.push_back(unit);
    return true;
  }
  auto& waiting = split_.waiting[static_cast<std::size_t>(worker_)];
  waiting.store((std::uint64_t{unit} + 1) | (out_of_order ? kOutOfOrder : 0), std::memory_order_seq_cst);
  struct Done {
    std::atomic<std::uint64_t>& flag;
    ~Done() { flag.store(0, std::memory_order_seq_cst); }
  } done{waiting};
  // A cycle is taken as real once seen at many spins in a row: the chain is read
  // while the workers move on, and a real cycle does not go away.
  constexpr int kCycleSeen = 256;
  for (int spins = 0, cycle = 0;; ++spins) {
    if (table_.try_lock(unit, worker_, touched)) {
      held_.push_back(unit);
      return true;
    }
    if (abandoned_.load(std::memory_order_relaxed)) throw RunAbandoned{};
    if (!out_of_order && must_give_way()) return false;  // gave_way_to_ and gave_way_for_ say to whom
    if (out_of_order) cycle = closes_cycle(unit) ? cycle + 1 : 0;
    if (cycle >= kCycleSeen) return false;
    if (spins >= 64) std::this_thread::yield();  // the holder may share this core
#if defined(__x86_64__) || defined(__i386__)
    else __builtin_ia32_pause();
#endif
  }
}

bool SplitLocks::must_give_way() {
  for (std::size_t w = 0; w < split_.workers; ++w) {
    const std::uint64_t wants = split_.waiting[w].load(std::memory_order_seq_cst);
    if ((wants & kOutOfOrder) && table_.holder(static_cast<std::size_t>((wants & ~kOutOfOrder) - 1)) == worker_) {
      gave_way_to_ = static_cast<int>(w);
      gave_way_for_ = wants;
      return true;
    }
  }
  return false;
}

// Every worker of a cycle stays waiting, so a cycle missed now (values read while
// they changed) is seen at a later spin.
bool SplitLocks::closes_cycle(std::uint32_t unit) const {
  int h = table_.holder(unit);
  for (std::size_t steps = 0; h >= 0 && h != worker_ && steps < split_.workers; ++steps) {
    const std::uint64_t wants = split_.waiting[static_cast<std::size_t>(h)].load(std::memory_order_seq_cst);
    if (!(wants & kOutOfOrder)) return false;  // it waits in unit order: it gives way
    h = table_.holder(static_cast<std::size_t>((wants & ~kOutOfOrder) - 1));
  }
  return h == worker_;
}

void SplitLocks::release() {
  for (const std::uint32_t u : held_) table_.unlock(u);
  held_.clear();
}

}  // namespace strata::loop
