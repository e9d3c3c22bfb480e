// Building a loop plan: reconnaissance, analysis, layout, conflict groups, then the
// per-thread work lists (work_lists.cpp).
#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/free_now.hpp"
#include "loop/loop_internal.hpp"
#include "loop/ownership.hpp"
#include "loop/split_groups.hpp"
#include "loop/spread.hpp"

namespace strata::loop::detail {

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
  // (A spread plan records its elements again, with the arrays whole: spread.hpp.)
  const bool record_now =
      previous && previous->choice.strategy == Strategy::groups && stride == 1 && !previous->spread;
  const std::vector<std::uint64_t> hinted_rows = record_now ? row_keyed_arrays(*previous) : std::vector<std::uint64_t>{};
  const std::uint64_t layout_seen = given.array->structure_version();
  // Units are noted in the previous plan's table: split groups lock them.
  const OwnershipTable* hinted_units = record_now ? previous->ownership.get() : nullptr;
  // Sized like the previous plan's pass (its count over all ranks, this rank's share).
  const std::int64_t expected =
      record_now && given.nnz > 0
          ? static_cast<std::int64_t>(static_cast<double>(previous->recon_accesses) * previous->recon_stride *
                                      static_cast<double>(given.local_nnz) / static_cast<double>(given.nnz))
          : 0;
  // Each rank visits its own iterations: an error on one is every rank's.
  std::vector<Recorder> first;
  strata::detail::all_or_none(rt.comm(), [&] {
    first = reconnoitre(given, body, record_now, stride, hinted_rows, hinted_units, expected);
  });
  for (const auto& rec : first) {
    accesses += rec.accesses();
    local_sites.insert(local_sites.end(), rec.sites().begin(), rec.sites().end());
    merge_read_sets(plan->read_sets, rec.read_sets());
  }
  RecordedAccesses recorded = take_accesses(first);
  std::vector<analysis::ElementAccess> elements = std::move(recorded.elements);
  std::vector<std::uint64_t> units = std::move(recorded.units);
  first.clear();
  plan->recon_accesses = rt.comm().allreduce(accesses, ReduceOp::sum);
  plan->recon_seconds = rt.comm().allreduce(seconds_since(t0), ReduceOp::max);

  const auto t1 = std::chrono::steady_clock::now();
  plan->sites = merge_sites(rt, local_sites);
  const std::vector<std::int64_t>& extents = given.shape;
  analyse(*plan, extents, options, given.array->array_id(), given.nnz);
  const auto strategy = plan->choice.strategy;
  // Conflict groups need every access; relaxed arrays need every rank's whole read
  // set, except where their caches hold every unit anyway, so that a read the sample
  // missed is served all the same: on one rank, where the cache is the values
  // (ps/table_layout.cpp), and where the sample already makes every table a replica.
  if (stride > 1 && (strategy == Strategy::groups || (reads_relaxed_arrays(*plan) && rt.size() > 1 &&
                                                       !relaxed_reads_replicated(rt, *plan))))
    return build_plan(given, body, options, where, 1);
  plan->spread = can_spread(*plan, given, body);
  lay_out(*plan, *given.array, extents, [&](int d) { return histogram(given.refreshed(), d); }, options);
  SpaceView space = given.refreshed();  // the layout may have moved the space

  // Work lists: this rank's iterations, per thread and step, in key order.
  const int T = rt.threads();
  const int steps = (strategy == Strategy::two_d || strategy == Strategy::two_d_skewed)
                        ? plan->schedule.blocks * plan->schedule.rounds
                        : 1;
  plan->work.assign(static_cast<std::size_t>(T), std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(steps)));
  std::vector<std::int32_t> group_thread;
  if (strategy == Strategy::groups) {
    const std::vector<std::uint64_t> row_keyed = row_keyed_arrays(*plan);
    std::optional<std::vector<std::int32_t>> spread;
    if (plan->spread) {
      spread = spread_groups(*plan, space, body, row_keyed, stride == 1 ? accesses : 0);
      if (!spread) {  // better gathered (spread.hpp): a group to split over rank 0's threads, say
        plan->spread = false;
        gather_on_rank0(*plan, *space.array);
        space = given.refreshed();
      }
    }
    // The groups hold for the accesses about to be recorded: with irregular subscripts
    // and more than one worker running them, every run re-validates them.
    if (plan->irregular && (T > 1 || plan->spread)) {
      // A spread plan's rank holds only some units of the arrays read in place too.
      auto table = std::make_shared<OwnershipTable>(*plan, /*track_reads=*/plan->spread);
      if (plan->spread && T == 1) table->mark_only();
      if (plan->spread) make_absent_units(*plan, *table, rt.rank());
      if (!table->empty()) plan->ownership = std::move(table);
    }
    // The first pass's elements number this rank's iterations as they were then, and
    // its units those of the previous plan's table.
    const bool units_hold = !plan->ownership || (hinted_units && plan->ownership->same_units(*hinted_units));
    if (spread) {
      group_thread = std::move(*spread);
    } else if (!record_now || row_keyed != hinted_rows || space.array->structure_version() != layout_seen ||
               !units_hold) {
      strata::detail::free_now(elements);
      strata::detail::free_now(units);
      RecordedAccesses recorded =
          record_accesses(space, body, row_keyed, plan->ownership.get(), stride == 1 ? accesses : 0);
      elements = std::move(recorded.elements);
      units = std::move(recorded.units);
    }
    if (!spread) group_thread = place_groups(*plan, space.local_nnz, elements, units);
    // A gathered plan groups rank 0's iterations (all of them); the report says the same on every rank.
    plan->groups = rt.comm().allreduce(plan->groups, ReduceOp::max);
    plan->split_groups = rt.comm().allreduce(plan->split_groups, ReduceOp::max);
    plan->split_iterations = rt.comm().allreduce(plan->split_iterations, ReduceOp::sum);
    // Slowest worker over the mean of all workers: the idle ranks of a gathered plan count.
    plan->imbalance = rt.comm().allreduce(plan->imbalance, ReduceOp::max) * (plan->gathered ? plan->ranks : 1);
  }
  fill_work_lists(*plan, run_view(*plan, space), options, group_thread, steps, positions_can_go(*plan, body));
  if (plan->split) {
    plan->split->arrange(plan->work);
    strata::detail::free_now(plan->list_of_position);  // arranged out of position order
  }
  if (strategy != Strategy::groups) {
    std::int64_t most = 0;
    for (const auto& sizes : plan->list_sizes) {
      std::int64_t c = 0;
      for (const auto size : sizes) c += size;
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
