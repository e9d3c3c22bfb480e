// A plan's work lists: which of this rank's iterations each thread runs at each step,
// in the order it runs them (build_plan fills them once its layout is set).
#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <optional>

#include "strata/detail/free_now.hpp"
#include "loop/index_reader.hpp"
#include "loop/loop_internal.hpp"
#include "loop/round_dealer.hpp"
#include "strata/random.hpp"

namespace strata::loop::detail {
namespace {

// A conflict-groups plan runs when iterations conflict, so its result depends on the
// order it visits them in, and a key order (all of a head entity's triples, then the
// next's) is the worst an SGD loop can get. Each thread visits its iterations in the
// order of a seeded hash of their index: the relative order of any two iterations is
// the same whatever the ranks, threads and grouping, and the same in every run.
void shuffle_groups_work(Plan& plan, const SpaceView& space, std::uint64_t seed) {
  std::int64_t index[4];
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  for (auto& steps : plan.work)
    for (auto& list : steps) {
      keyed.clear();
      for (const std::uint32_t pos : list) {
        index_at(space, pos, index);
        std::uint64_t h = seed;
        for (int d = 0; d < space.dims; ++d) h = mix64(h ^ static_cast<std::uint64_t>(index[d]));
        keyed.emplace_back(h, pos);
      }
      std::sort(keyed.begin(), keyed.end());
      for (std::size_t k = 0; k < list.size(); ++k) list[k] = keyed[k].second;
    }
}

// Per thread of this rank (worker `first_worker` + th), the first of the positions
// whose first index is in its part [bounds[w], bounds[w + 1]); T + 1 values, the last
// the rank's iterations. Positions are in key order, so a split of the first
// dimension makes each thread's positions contiguous.
std::vector<std::int64_t> thread_ranges(const SpaceView& space, const std::vector<std::int64_t>& bounds,
                                        int first_worker, int T) {
  std::vector<std::int64_t> ranges;
  std::int64_t index[4];
  for (int th = 0; th < T; ++th) {
    const std::int64_t from = bounds[static_cast<std::size_t>(first_worker + th)];
    std::int64_t lo = th == 0 ? 0 : ranges.back(), hi = space.local_nnz;  // first position with index >= from
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      index_at(space, mid, index);
      if (index[0] < from) lo = mid + 1;
      else hi = mid;
    }
    ranges.push_back(lo);
  }
  ranges.push_back(space.local_nnz);
  return ranges;
}

}  // namespace

void fill_work_lists(Plan& plan, const SpaceView& space, const LoopOptions& options,
                     const std::vector<std::int32_t>& group_thread, int steps, bool positions_can_go) {
  using analysis::Strategy;
  Runtime& rt = *space.rt;
  const int T = rt.threads(), r = plan.gathered ? 0 : rt.rank();
  const std::int64_t n = space.local_nnz;
  const Strategy strategy = plan.choice.strategy;
  const auto s = static_cast<std::size_t>(plan.choice.space_dim), t = static_cast<std::size_t>(plan.choice.time_dim);
  const auto& skew = plan.choice.skew;
  // Unordered 2-D plans that go round more than once: the local slice (thread x S +
  // slice) of each iteration, and a RoundDealer from their counts per time index.
  // Iterations of one (space, time) pair that follow each other in key order (lda's
  // occurrences of a word in a document) are dealt as one, so they run back to back
  // on the rows they share instead of being spread over the rounds (docs/loops.md).
  const int slices = plan.slices_per_worker;
  auto local_slice = [&](std::int64_t a, int w) {
    return (plan.slice_bounds.empty() ? w : range_part(plan.slice_bounds, a)) - r * T * slices;
  };
  // Where the threads split the space's first dimension, each thread's iterations are
  // a contiguous range of positions (key order), and the threads place their own.
  const std::vector<std::int64_t> ranges =
      T > 1 && plan.choice.space_dim == 0 &&
              (strategy == Strategy::one_d || strategy == Strategy::data_parallel || strategy == Strategy::two_d)
          ? thread_ranges(space, plan.space_bounds, r * T, T)
          : std::vector<std::int64_t>{};
  // f(begin, end, th): positions [begin, end), all of thread th's (-1: every thread's;
  // with one thread, its).
  auto for_each_range = [&](const std::function<void(std::int64_t, std::int64_t, int)>& f) {
    if (ranges.empty()) return f(0, n, T == 1 ? 0 : -1);
    rt.pool().run([&](int th) { f(ranges[static_cast<std::size_t>(th)], ranges[static_cast<std::size_t>(th) + 1], th); });
  };
  // Where a time index falls among the blocks: a table when it is no larger than the
  // iterations, instead of a search per iteration.
  std::vector<std::int32_t> block_of_time;
  if (strategy == Strategy::two_d && space.shape[t] <= n) {
    block_of_time.resize(static_cast<std::size_t>(space.shape[t]));
    for (std::int64_t b = 0; b < space.shape[t]; ++b)
      block_of_time[static_cast<std::size_t>(b)] = range_part(plan.time_bounds, b);
  }
  auto block_of = [&](std::int64_t b) {
    return block_of_time.empty() ? range_part(plan.time_bounds, b) : block_of_time[static_cast<std::size_t>(b)];
  };
  // Key order repeats the space index over many iterations in a row (a user's
  // ratings): its worker and slice are looked up once per run of equal indices.
  struct SpacePart {
    std::int64_t a = -1;
    int worker = 0, slice = 0;
  };
  auto space_part = [&](SpacePart& last, std::int64_t a) {
    if (a != last.a) {
      last.a = a, last.worker = range_part(plan.space_bounds, a);
      last.slice = local_slice(a, last.worker);
    }
    return last;
  };
  std::optional<RoundDealer> rounds;
  if (strategy == Strategy::two_d && plan.schedule.rounds > 1) {
    const std::int64_t extent = space.shape[t];
    std::vector<std::uint32_t> counts(static_cast<std::size_t>(T * slices * extent), 0);
    for_each_range([&](std::int64_t begin, std::int64_t end, int) {  // a thread counts its own slices only
      with_index_reader(space, [&](const auto index_of) {
        std::int64_t buf[4], last_b = -1;
        SpacePart part;
        for (std::int64_t pos = begin; pos < end; ++pos) {
          const std::int64_t* i = index_of(pos, buf);
          const std::int64_t a = i[s], b = i[t];
          if (a == part.a && b == last_b) continue;
          last_b = b;
          const SpacePart p = space_part(part, a);
          ++counts[static_cast<std::size_t>(p.slice * extent + b)];
        }
      });
    });
    rounds.emplace(rt.comm(), counts, extent, slices, plan.schedule.rounds);
  }
  // Each iteration's list (thread x steps + step) first, then the lists filled at
  // their final sizes: growing them one position at a time copied each several times.
  const auto lists = static_cast<std::size_t>(T) * static_cast<std::size_t>(steps);
  // The plan keeps the lists by position for packing (16 bits each; more lists than
  // that, only while filling).
  const bool narrow = lists <= std::size_t{UINT16_MAX} + 1;
  std::vector<std::uint32_t> wide_list_of(narrow ? 0 : static_cast<std::size_t>(n));
  if (narrow) plan.list_of_position.resize(static_cast<std::size_t>(n));  // every position is set below
  auto set_list = [&](std::int64_t pos, std::size_t list) {
    if (narrow) plan.list_of_position[static_cast<std::size_t>(pos)] = static_cast<std::uint16_t>(list);
    else wide_list_of[static_cast<std::size_t>(pos)] = static_cast<std::uint32_t>(list);
  };
  auto list_at = [&](std::int64_t pos) -> std::size_t {
    return narrow ? plan.list_of_position[static_cast<std::size_t>(pos)] : wide_list_of[static_cast<std::size_t>(pos)];
  };
  // Ordered plans rely on key order inside a block; unordered ones may visit a
  // block's iterations in any order.
  const bool shuffle_groups = strategy == Strategy::groups && !plan.ordered && !options.key_order;
  const bool shuffle_seeded = !shuffle_groups && options.shuffle_seed && !plan.ordered && strategy != Strategy::serial;
  // Positions that packing would let go at once are not listed where it can read
  // each position's list instead (in position order: not shuffled).
  const bool list_positions = !(positions_can_go && narrow && !shuffle_groups && !shuffle_seeded);
  // Each list's size and subscript bounds (the base of narrow records), written by
  // the range that fills the list (a list is never split over two ranges).
  plan.list_sizes.assign(static_cast<std::size_t>(T), std::vector<std::uint32_t>(static_cast<std::size_t>(steps), 0));
  std::array<std::int64_t, 4> no_lo, no_hi;
  no_lo.fill(INT64_MAX), no_hi.fill(INT64_MIN);
  plan.list_lo.assign(static_cast<std::size_t>(T), std::vector<std::array<std::int64_t, 4>>(static_cast<std::size_t>(steps), no_lo));
  plan.list_hi.assign(static_cast<std::size_t>(T), std::vector<std::array<std::int64_t, 4>>(static_cast<std::size_t>(steps), no_hi));
  plan.thread_positions = !ranges.empty() ? ranges : T == 1 ? std::vector<std::int64_t>{0, n} : std::vector<std::int64_t>{};
  const auto per_thread = static_cast<std::size_t>(steps);
  for_each_range([&](std::int64_t begin, std::int64_t end, int range_thread) {
    with_index_reader(space, [&](const auto index_of) {
      std::int64_t buf[4];
      std::int64_t dealt_a = -1, dealt_b = -1;  // the pair last dealt, and its round
      int dealt_round = 0;
      SpacePart part;
      // The lists this range fills: its thread's only (sized so, not by every thread's:
      // many threads with many steps each would multiply the two).
      const std::size_t first = range_thread < 0 ? 0 : static_cast<std::size_t>(range_thread) * per_thread;
      const std::size_t mine = range_thread < 0 ? lists : per_thread;
      std::vector<std::size_t> count(mine, 0);
      std::vector<std::array<std::int64_t, 4>> lo(mine, no_lo), hi(mine, no_hi);
      // Position `pos` (subscripts i) goes to this range's list `at`; with `boxed`, the
      // list's subscript bounds are set already.
      auto note = [&](std::int64_t pos, const std::int64_t* i, std::size_t at, bool boxed) {
        set_list(pos, first + at);
        ++count[at];
        if (boxed) return;
        for (std::size_t d = 0; d < index_of.dims; ++d) {
          lo[at][d] = std::min(lo[at][d], i[d]);
          hi[at][d] = std::max(hi[at][d], i[d]);
        }
      };
      if (strategy == Strategy::two_d && range_thread >= 0) {
        // The range is one worker's: its steps by (time block, round) come from a table
        // of its own, with no per-iteration switch or schedule lookup (the loop runs
        // once per iteration of the space: 10M for mf's 10M ratings).
        const int w = r * T + range_thread, Q = plan.schedule.rounds, B = plan.schedule.blocks;
        std::vector<std::uint32_t> step_at(static_cast<std::size_t>(B * Q));
        for (int blk = 0; blk < B; ++blk)
          for (int q = 0; q < Q; ++q) {
            const int step = plan.schedule.step_of(w, blk, q);
            // The boxes below rely on it: the step of round q is in round q.
            STRATA_CHECK(plan.schedule.round_of(step) == q, "a schedule whose steps are not in their rounds");
            step_at[static_cast<std::size_t>(blk * Q + q)] = static_cast<std::uint32_t>(step);
          }
        // A step's iterations lie in its box: its round's slice of the worker's space
        // part (round q runs slice q mod S, round_dealer.hpp) by its time block. Where
        // every box spans at most 2^16 indices, the boxes serve as the lists' bounds
        // (narrow records need bounds that contain the subscripts, not the tightest),
        // and the iterations are not scanned for them.
        bool boxed = index_of.dims == 2;  // (a 2-D plan's steps are its blocks x rounds)
        for (std::size_t step = 0; boxed && step < per_thread; ++step) {
          const int blk = plan.schedule.order[static_cast<std::size_t>(w)][step];
          const int q_of_step = plan.schedule.round_of(static_cast<int>(step));
          const bool sliced = !plan.slice_bounds.empty();
          const auto& cuts = sliced ? plan.slice_bounds : plan.space_bounds;
          const auto cut = static_cast<std::size_t>(sliced ? w * slices + q_of_step % slices : w);
          lo[step][s] = cuts[cut], hi[step][s] = cuts[cut + 1] - 1;
          lo[step][t] = plan.time_bounds[static_cast<std::size_t>(blk)];
          hi[step][t] = plan.time_bounds[static_cast<std::size_t>(blk) + 1] - 1;
          boxed = hi[step][s] - lo[step][s] <= UINT16_MAX && hi[step][t] - lo[step][t] <= UINT16_MAX;
        }
        if (!boxed) {
          std::fill(lo.begin(), lo.end(), no_lo);
          std::fill(hi.begin(), hi.end(), no_hi);
        }
        for (std::int64_t pos = begin; pos < end; ++pos) {
          const std::int64_t* i = index_of(pos, buf);
          const std::int64_t a = i[s], b = i[t];
          if (a != part.a) {
            space_part(part, a);
            STRATA_CHECK(part.worker == w, "an iteration of another worker in a thread's range of positions");
          }
          if (rounds && (a != dealt_a || b != dealt_b)) {
            dealt_round = rounds->deal(part.slice, b);
            dealt_a = a, dealt_b = b;
          }
          note(pos, i, step_at[static_cast<std::size_t>(block_of(b) * Q + dealt_round)], boxed);
        }
      } else {
        for (std::int64_t pos = begin; pos < end; ++pos) {
          const std::int64_t* i = index_of(pos, buf);
          int thread = 0, step = 0;
          switch (strategy) {
            case Strategy::serial: break;
            case Strategy::data_parallel:
            case Strategy::one_d: thread = space_part(part, i[s]).worker - r * T; break;
            case Strategy::groups: thread = group_thread[static_cast<std::size_t>(pos)]; break;
            case Strategy::two_d: {
              const std::int64_t a = i[s], b = i[t];
              const SpacePart p = space_part(part, a);
              if (rounds && (a != dealt_a || b != dealt_b)) {
                dealt_round = rounds->deal(p.slice, b);
                dealt_a = a, dealt_b = b;
              }
              thread = p.worker - r * T;
              step = plan.schedule.step_of(p.worker, block_of(b), dealt_round);
              break;
            }
            case Strategy::two_d_skewed: {  // one round: nothing is dealt
              const std::int64_t a = skew[0][0] * i[s] + skew[0][1] * i[t], b = skew[1][0] * i[s] + skew[1][1] * i[t];
              const int w = range_part(plan.space_bounds, a);
              thread = w - r * T;
              step = plan.schedule.step_of(w, range_part(plan.time_bounds, b));
              break;
            }
          }
          STRATA_CHECK(thread >= 0 && thread < T, "an iteration was assigned to another rank's worker");
          STRATA_CHECK(ranges.empty() || (pos >= ranges[static_cast<std::size_t>(thread)] &&
                                          pos < ranges[static_cast<std::size_t>(thread) + 1]),
                       "an iteration outside its thread's range of positions");
          const std::size_t list = static_cast<std::size_t>(thread) * static_cast<std::size_t>(steps) +
                                   static_cast<std::size_t>(step);
          note(pos, i, list - first, false);  // within this range's lists (the checks above)
        }
      }
      for (std::size_t at = 0; at < mine; ++at)
        if (count[at] > 0) {
          const std::size_t l = first + at;
          plan.list_sizes[l / per_thread][l % per_thread] = static_cast<std::uint32_t>(count[at]);
          plan.list_lo[l / per_thread][l % per_thread] = lo[at];
          plan.list_hi[l / per_thread][l % per_thread] = hi[at];
        }
      if (!list_positions) return;
      auto list_named = [&](std::size_t list) -> std::vector<std::uint32_t>& {
        return plan.work[list / per_thread][list % per_thread];
      };
      for (std::size_t at = 0; at < mine; ++at)
        if (count[at] > 0) list_named(first + at).reserve(count[at]);
      for (std::int64_t pos = begin; pos < end; ++pos) list_named(list_at(pos)).push_back(static_cast<std::uint32_t>(pos));
    });
  });
  plan.positions_dropped = !list_positions;
  if (shuffle_groups || shuffle_seeded) strata::detail::free_now(plan.list_of_position);  // out of position order
  if (shuffle_groups)
    shuffle_groups_work(plan, space, options.shuffle_seed ? options.shuffle_seed : mix64(rt.seed() ^ 0x67726f757073));
  else if (shuffle_seeded)
    for (int th = 0; th < T; ++th)
      for (int st = 0; st < steps; ++st) {
        auto& list = plan.work[static_cast<std::size_t>(th)][static_cast<std::size_t>(st)];
        RandomStream order(options.shuffle_seed, static_cast<std::uint64_t>((r * T + th) * steps + st));
        std::shuffle(list.begin(), list.end(), order);
      }
}

}  // namespace strata::loop::detail
