// Building a loop plan: reconnaissance, analysis, layout and per-thread work lists.
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "loop/ownership.hpp"
#include "loop/round_dealer.hpp"
#include "loop/split_groups.hpp"
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

std::unique_ptr<Plan> build_plan(const SpaceView& stale, const LoopBody& body, const LoopOptions& options,
                                 const std::source_location& where, int stride, const Plan* previous) {
  // A caller's view may predate a layout that moved the space (a speculative plan
  // replaced after its first run): start from the array as it is now.
  const SpaceView given = stale.refreshed();
  Runtime& rt = *given.rt;
  auto plan = std::make_unique<Plan>();
  plan->serial = next_plan_serial();
  plan->loop_site = fmt::format("{}:{}", where.file_name(), where.line());
  plan->iter_dims = given.dims;
  plan->ordered = options.ordered;
  plan->key_order = options.key_order;
  plan->ranks = rt.size();
  plan->threads = rt.threads();
  plan->workers = rt.size() * rt.threads();
  plan->recon_stride = stride;
  plan->verified = stride == 1;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<SiteRecord> local_sites;
  std::int64_t accesses = 0;
  // Planning again a loop whose groups no longer held: it will most likely need
  // groups again, so this pass records the elements too, keyed as before, and saves
  // the second pass when the analysis agrees.
  using analysis::Strategy;
  const bool record_now = previous && previous->choice.strategy == Strategy::groups && stride == 1;
  const std::vector<std::uint64_t> hinted_rows = record_now ? row_keyed_arrays(*previous) : std::vector<std::uint64_t>{};
  const std::uint64_t layout_seen = given.array->structure_version();
  // Units are noted in the previous plan's table: split groups lock them.
  const OwnershipTable* hinted_units = record_now ? previous->ownership.get() : nullptr;
  std::vector<analysis::ElementAccess> elements;
  std::vector<std::uint64_t> units;
  for (auto& rec : reconnoitre(given, body, record_now, stride, hinted_rows, hinted_units)) {
    accesses += rec.accesses();
    local_sites.insert(local_sites.end(), rec.sites().begin(), rec.sites().end());
    merge_read_sets(plan->read_sets, rec.read_sets());
    elements.insert(elements.end(), rec.elements().begin(), rec.elements().end());
    units.insert(units.end(), rec.units().begin(), rec.units().end());
  }
  plan->recon_accesses = rt.comm().allreduce(accesses, ReduceOp::sum);
  plan->recon_seconds = rt.comm().allreduce(seconds_since(t0), ReduceOp::max);

  const auto t1 = std::chrono::steady_clock::now();
  plan->sites = merge_sites(rt, local_sites);
  const std::vector<std::int64_t>& extents = given.shape;
  analyse(*plan, extents, options, given.array->array_id(), given.nnz);
  const auto strategy = plan->choice.strategy;
  // Conflict groups need every access; relaxed arrays need every rank's whole read
  // set, except on one rank, where a relaxed array's cache is its values holding every
  // unit (ps/table_layout.cpp) and a read the sample missed is served all the same.
  if ((strategy == Strategy::groups || (reads_relaxed_arrays(*plan) && rt.size() > 1)) && stride > 1)
    return build_plan(given, body, options, where, 1);
  lay_out(*plan, *given.array, extents, [&](int d) { return histogram(given.refreshed(), d); }, options);
  const SpaceView space = given.refreshed();  // the layout may have moved the space

  // Work lists: this rank's iterations, per thread and step, in key order.
  const int T = rt.threads(), r = plan->gathered ? 0 : rt.rank();
  const std::int64_t n = space.local_nnz;
  const int steps = (strategy == Strategy::two_d || strategy == Strategy::two_d_skewed)
                        ? plan->schedule.blocks * plan->schedule.rounds
                        : 1;
  plan->work.assign(static_cast<std::size_t>(T), std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(steps)));
  std::vector<std::int32_t> group_thread;
  if (strategy == Strategy::groups) {
    const std::vector<std::uint64_t> row_keyed = row_keyed_arrays(*plan);
    // The groups hold for the accesses about to be recorded: with irregular subscripts
    // and more than one thread running them, every run re-validates them.
    if (plan->irregular && T > 1) {
      auto table = std::make_shared<OwnershipTable>(*plan);
      if (!table->empty()) plan->ownership = std::move(table);
    }
    // The first pass's elements number this rank's iterations as they were then, and
    // its units those of the previous plan's table.
    const bool units_hold = !plan->ownership || (hinted_units && plan->ownership->same_units(*hinted_units));
    if (!record_now || row_keyed != hinted_rows || space.array->structure_version() != layout_seen || !units_hold) {
      elements.clear();
      units.clear();
      for (auto& rec : reconnoitre(space, body, true, 1, row_keyed, plan->ownership.get())) {
        elements.insert(elements.end(), rec.elements().begin(), rec.elements().end());
        units.insert(units.end(), rec.units().begin(), rec.units().end());
      }
    }
    group_thread = place_groups(*plan, n, elements, units);
    // A gathered plan groups rank 0's iterations (all of them); the report says the same on every rank.
    plan->groups = rt.comm().allreduce(plan->groups, ReduceOp::max);
    plan->split_groups = rt.comm().allreduce(plan->split_groups, ReduceOp::max);
    plan->split_iterations = rt.comm().allreduce(plan->split_iterations, ReduceOp::sum);
    // Slowest worker over the mean of all workers: the idle ranks of a gathered plan count.
    plan->imbalance = rt.comm().allreduce(plan->imbalance, ReduceOp::max) * (plan->gathered ? plan->ranks : 1);
  }
  const auto s = static_cast<std::size_t>(plan->choice.space_dim), t = static_cast<std::size_t>(plan->choice.time_dim);
  const auto& skew = plan->choice.skew;
  // Unordered 2-D plans that go round more than once: the local slice (thread x S +
  // slice) of each iteration, and a RoundDealer from their counts per time index.
  // Iterations of one (space, time) pair that follow each other in key order (lda's
  // occurrences of a word in a document) are dealt as one, so they run back to back
  // on the rows they share instead of being spread over the rounds (docs/loops.md).
  const int slices = plan->slices_per_worker;
  auto local_slice = [&](std::int64_t a, int w) {
    return (plan->slice_bounds.empty() ? w : range_part(plan->slice_bounds, a)) - r * T * slices;
  };
  // Where the threads split the space's first dimension, each thread's iterations are
  // a contiguous range of positions (key order), and the threads place their own.
  const std::vector<std::int64_t> ranges =
      T > 1 && plan->choice.space_dim == 0 &&
              (strategy == Strategy::one_d || strategy == Strategy::data_parallel || strategy == Strategy::two_d)
          ? thread_ranges(space, plan->space_bounds, r * T, T)
          : std::vector<std::int64_t>{};
  auto for_each_range = [&](const std::function<void(std::int64_t, std::int64_t)>& f) {
    if (ranges.empty()) return f(0, n);
    rt.pool().run([&](int th) { f(ranges[static_cast<std::size_t>(th)], ranges[static_cast<std::size_t>(th) + 1]); });
  };
  std::optional<RoundDealer> rounds;
  if (strategy == Strategy::two_d && plan->schedule.rounds > 1) {
    const std::int64_t extent = space.shape[t];
    std::vector<std::uint32_t> counts(static_cast<std::size_t>(T * slices * extent), 0);
    for_each_range([&](std::int64_t begin, std::int64_t end) {  // a thread counts its own slices only
      std::int64_t i[4], last_a = -1, last_b = -1;
      for (std::int64_t pos = begin; pos < end; ++pos) {
        index_at(space, pos, i);
        const std::int64_t a = i[s], b = i[t];
        if (a == last_a && b == last_b) continue;
        last_a = a, last_b = b;
        ++counts[static_cast<std::size_t>(local_slice(a, range_part(plan->space_bounds, a)) * extent + b)];
      }
    });
    rounds.emplace(rt.comm(), counts, extent, slices, plan->schedule.rounds);
  }
  for_each_range([&](std::int64_t begin, std::int64_t end) {
    std::int64_t i[4];
    std::int64_t dealt_a = -1, dealt_b = -1;  // the pair last dealt, and its round
    int dealt_round = 0;
    for (std::int64_t pos = begin; pos < end; ++pos) {
      index_at(space, pos, i);
      int thread = 0, step = 0;
      switch (strategy) {
        case Strategy::serial: break;
        case Strategy::data_parallel:
        case Strategy::one_d: thread = range_part(plan->space_bounds, i[s]) - r * T; break;
        case Strategy::groups: thread = group_thread[static_cast<std::size_t>(pos)]; break;
        case Strategy::two_d:
        case Strategy::two_d_skewed: {
          std::int64_t a = i[s], b = i[t];
          if (strategy == Strategy::two_d_skewed) {
            const std::int64_t a2 = skew[0][0] * a + skew[0][1] * b, b2 = skew[1][0] * a + skew[1][1] * b;
            a = a2, b = b2;
          }
          const int w = range_part(plan->space_bounds, a);
          if (rounds && (a != dealt_a || b != dealt_b)) {
            dealt_round = rounds->deal(local_slice(a, w), b);
            dealt_a = a, dealt_b = b;
          }
          thread = w - r * T;
          step = plan->schedule.step_of(w, range_part(plan->time_bounds, b), dealt_round);
          break;
        }
      }
      STRATA_CHECK(thread >= 0 && thread < T, "an iteration was assigned to another rank's worker");
      STRATA_CHECK(ranges.empty() || (pos >= ranges[static_cast<std::size_t>(thread)] &&
                                      pos < ranges[static_cast<std::size_t>(thread) + 1]),
                   "an iteration outside its thread's range of positions");
      plan->work[static_cast<std::size_t>(thread)][static_cast<std::size_t>(step)].push_back(
          static_cast<std::uint32_t>(pos));
    }
  });
  // Ordered plans rely on key order inside a block; unordered ones may visit a
  // block's iterations in any order.
  if (strategy == Strategy::groups && !plan->ordered && !options.key_order)
    shuffle_groups_work(*plan, space, options.shuffle_seed ? options.shuffle_seed : mix64(rt.seed() ^ 0x67726f757073));
  else if (options.shuffle_seed && !plan->ordered && strategy != Strategy::serial)
    for (int th = 0; th < T; ++th)
      for (int st = 0; st < steps; ++st) {
        auto& list = plan->work[static_cast<std::size_t>(th)][static_cast<std::size_t>(st)];
        RandomStream order(options.shuffle_seed, static_cast<std::uint64_t>((r * T + th) * steps + st));
        std::shuffle(list.begin(), list.end(), order);
      }
  if (plan->split) plan->split->arrange(plan->work);
  if (strategy != Strategy::groups) {
    std::int64_t most = 0;
    for (const auto& w : plan->work) {
      std::int64_t c = 0;
      for (const auto& st : w) c += static_cast<std::int64_t>(st.size());
      most = std::max(most, c);
    }
    most = rt.comm().allreduce(most, ReduceOp::max);
    const double mean = static_cast<double>(space.nnz) / plan->workers;  // the idle ranks of a gathered plan count
    plan->imbalance = mean > 0 ? static_cast<double>(most) / mean : 1.0;
  }
  plan->plan_seconds = rt.comm().allreduce(seconds_since(t1), ReduceOp::max);
  plan->space_version = space.array->structure_version();
  remember_versions(*plan);
  if (options.explain) print_plan(rt, *plan);
  return plan;
}

}  // namespace strata::loop::detail
