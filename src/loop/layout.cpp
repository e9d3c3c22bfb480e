// Laying a loop out for its strategy: worker bounds along the space dimension, time
// blocks, rounds and slices, the 2-D schedule, and the placement of every array the
// loop touches (co-partitioned, travelling, replicated or gathered on rank 0).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "loop/wavefront_ranks.hpp"
#include "loop/worker_splits.hpp"
#include "strata/error.hpp"

namespace strata::loop::detail {

namespace {

std::vector<std::int64_t> rank_bounds_of(const std::vector<std::int64_t>& worker_bounds, int ranks, int threads) {
  std::vector<std::int64_t> b;
  for (int r = 0; r <= ranks; ++r) b.push_back(worker_bounds[static_cast<std::size_t>(r * threads)]);
  return b;
}

// Rank bounds along the time dimension where each rank holds the time blocks it is
// home to (BlockSchedule::home_ranks): one range per rank, in rank order, in a rotation.
std::vector<std::int64_t> home_block_bounds(const Plan& plan, int ranks, int threads) {
  const std::vector<int> home = plan.schedule.home_ranks(threads);
  std::vector<std::int64_t> bounds{0};
  for (std::size_t b = 0; b < home.size(); ++b) {
    STRATA_CHECK(home[b] >= static_cast<int>(bounds.size()) - 1, "a rotation's blocks have their homes in rank order");
    while (static_cast<int>(bounds.size()) - 1 < home[b]) bounds.push_back(plan.time_bounds[b]);
  }
  while (static_cast<int>(bounds.size()) <= ranks) bounds.push_back(plan.time_bounds.back());
  return bounds;
}


// Bytes of the arrays with a subscript that follows iteration dimension `dim`.
double bytes_following(const Plan& plan, int dim) {
  double bytes = 0;
  for (const auto& site : plan.sites)
    for (const auto& sub : site.subs)
      if (sub.kind == analysis::Subscript::Kind::affine && sub.iter_dim == dim) {
        if (auto* a = strata::detail::ArrayBase::find_array(site.array_id)) bytes += dense_bytes(*a);
        break;
      }
  return bytes;
}

// Enough time blocks that one block of the arrays following the time dimension
// (the rows every iteration of a block touches at random) fits in about 256 KiB.
int auto_blocks_per_worker(const Plan& plan) {
  constexpr double kTarget = 256 * 1024;
  const int k = static_cast<int>(std::ceil(bytes_following(plan, plan.choice.time_dim) / (kTarget * plan.workers)));
  return std::clamp(k, 2, 64);
}

// Slices of a worker's space part (RoundDealer): enough that one slice of the arrays
// following the space dimension fits in about 8 MiB, so it stays in cache for the
// steps of a round. Every visit of a slice loads its rows again, so fewer visits of
// smaller slices win (docs/loops.md, "Strategies and layouts", has mf's figures).
int auto_slices_per_worker(const Plan& plan) {
  constexpr double kTarget = 8 * 1024 * 1024;
  const int s = static_cast<int>(std::ceil(bytes_following(plan, plan.choice.space_dim) / (kTarget * plan.workers)));
  return std::clamp(s, 1, 64);
}

// Rounds of an unordered 2-D schedule (LoopOptions::rounds): enough that each of a
// worker's `slices` is visited 8 times a pass, fewer when a step of a worker would
// hold under 1024 iterations (each step costs a hand-over). Fewer visits put a
// space row's updates in fewer bursts a pass: SGD with per-row step sizes then
// converges per pass unlike the serial program's shuffled order (docs/loops.md).
int auto_rounds(std::int64_t iterations, int workers, int blocks, int slices) {
  constexpr std::int64_t kMinStep = 1024, kVisits = 8;
  const std::int64_t per_round = static_cast<std::int64_t>(workers) * blocks * kMinStep;
  return static_cast<int>(std::clamp<std::int64_t>(iterations / per_round, 1, kVisits * slices));
}

// Each worker's space part cut into `slices` slices of about equal iterations.
std::vector<std::int64_t> slice_bounds_of(const std::vector<std::int64_t>& space_bounds,
                                          const std::vector<std::int64_t>& hist, int slices) {
  std::vector<std::int64_t> b{space_bounds.front()};
  for (std::size_t w = 0; w + 1 < space_bounds.size(); ++w) {
    const auto lo = space_bounds[w], hi = space_bounds[w + 1];
    const auto part = std::span<const std::int64_t>(hist).subspan(static_cast<std::size_t>(lo),
                                                                 static_cast<std::size_t>(hi - lo));
    const auto cuts = balanced_bounds(part, slices);
    for (std::size_t q = 1; q < cuts.size(); ++q) b.push_back(lo + cuts[q]);
  }
  return b;
}

// The most iterations any part gets when `bounds` cut the histogram `hist`.
std::int64_t heaviest_part(const std::vector<std::int64_t>& hist, const std::vector<std::int64_t>& bounds) {
  std::int64_t most = 0;
  for (std::size_t p = 0; p + 1 < bounds.size(); ++p) {
    std::int64_t load = 0;
    for (auto i = bounds[p]; i < bounds[p + 1]; ++i) load += hist[static_cast<std::size_t>(i)];
    most = std::max(most, load);
  }
  return most;
}

// Worker bounds along the space dimension (src/loop/worker_splits.hpp). A loop
// that writes an array it keeps aligned, or writes through a Buffer, splits the
// space by its own histogram: its result depends on the split, so the split must
// depend only on its data. It remembers the split for its aligned arrays. A loop
// that writes nothing adopts a remembered split of an array it keeps aligned (dense
// arrays largest first: they cost the most to move) if its busiest worker gets at
// most 15 % more iterations than under its own balanced split.
std::vector<std::int64_t> space_worker_bounds(Plan& plan, strata::detail::ArrayBase& space,
                                              const std::vector<std::int64_t>& hist) {
  std::vector<std::pair<strata::detail::ArrayBase*, int>> aligned;
  for (const auto& role : plan.roles)
    if (role.placement == Placement::aligned)
      if (auto* a = strata::detail::ArrayBase::find_array(role.array_id); a && a != &space && a->array_id() != 0)
        aligned.emplace_back(a, role.array_dim);
  const auto balanced = balanced_bounds(hist, plan.workers);
  plan.space_bounds_note = "balanced by the iteration histogram";
  if (!changed_arrays(plan, space.array_id(), false).empty()) {  // writes in place or through Buffers
    for (const auto& [array, dim] : aligned) remember_split(array->array_id(), dim, balanced);
    if (space.array_id() != 0) remember_split(space.array_id(), plan.choice.space_dim, balanced);
    return balanced;
  }
  // Dense arrays largest first (sparse ones count as 0 bytes, keeping their order).
  auto bytes = [](strata::detail::ArrayBase* a) { return a->is_sparse_array() ? 0.0 : dense_bytes(*a); };
  std::stable_sort(aligned.begin(), aligned.end(),
                   [&](const auto& x, const auto& y) { return bytes(x.first) > bytes(y.first); });
  const auto best = heaviest_part(hist, balanced);
  for (const auto& [array, dim] : aligned) {
    const auto* split = remembered_split(array->array_id(), dim, static_cast<std::size_t>(plan.workers));
    if (!split || split->back() != static_cast<std::int64_t>(hist.size())) continue;
    const auto load = heaviest_part(hist, *split);
    if (static_cast<double>(load) > 1.15 * static_cast<double>(best)) continue;
    plan.space_bounds_note = fmt::format(
        "kept from an earlier plan's split of {} (busiest worker {:.3f}x the balanced split's)",
        array->name().empty() ? fmt::format("array #{}", array->array_id()) : array->name(),
        best > 0 ? static_cast<double>(load) / static_cast<double>(best) : 1.0);
    return *split;
  }
  return balanced;
}

}  // namespace

double dense_bytes(const strata::detail::ArrayBase& a) {
  double v = static_cast<double>(a.element_size());
  for (auto e : a.shape_vector()) v *= static_cast<double>(e);
  return v;
}

void gather_on_rank0(Plan& plan, strata::detail::ArrayBase& space) {
  // Range bounds [0, E, E, ..., E] along the first dimension.
  auto to_rank0 = [&](strata::detail::ArrayBase& a) {
    const auto e = a.shape_vector()[0];
    std::vector<std::int64_t> bounds(static_cast<std::size_t>(plan.ranks) + 1, e);
    bounds[0] = 0;
    a.repartition_to(Partition::range(0, bounds));
  };
  plan.gathered = true;
  to_rank0(space);
  for (const auto& role : plan.roles)
    if (auto* a = strata::detail::ArrayBase::find_array(role.array_id); a && a != &space) to_rank0(*a);
}

void lay_out(Plan& plan, strata::detail::ArrayBase& space, const std::vector<std::int64_t>& extents,
             const std::function<std::vector<std::int64_t>(int)>& histogram, const LoopOptions& options) {
  using analysis::Strategy;
  const int W = plan.workers, T = plan.threads, P = plan.ranks;
  const auto& c = plan.choice;
  const int k = options.blocks_per_worker > 0 ? options.blocks_per_worker : auto_blocks_per_worker(plan);
  const auto s = static_cast<std::size_t>(std::max(0, c.space_dim));
  const auto t = static_cast<std::size_t>(std::max(0, c.time_dim));
  // Strategies that are not partitioned across ranks run on rank 0 (conflict groups
  // unless they are spread over the ranks: spread.hpp; skewed wavefronts unless they
  // fit the ranks: wavefront_ranks.hpp).
  plan.wavefront_ranks = P > 1 && c.strategy == Strategy::two_d_skewed && wavefront_fits_ranks(plan, space);
  const bool gather = P > 1 && (c.strategy == Strategy::serial || (c.strategy == Strategy::groups && !plan.spread) ||
                                (c.strategy == Strategy::two_d_skewed && !plan.wavefront_ranks));
  if (gather) gather_on_rank0(plan, space);
  const int Wp = gather ? T : W;  // workers that take part
  switch (c.strategy) {
    case Strategy::serial:
    case Strategy::groups: break;
    case Strategy::data_parallel:
    case Strategy::one_d: plan.space_bounds = space_worker_bounds(plan, space, histogram(c.space_dim)); break;
    case Strategy::two_d: {
      const auto hist = histogram(c.space_dim);
      plan.space_bounds = space_worker_bounds(plan, space, hist);
      plan.time_bounds = balanced_bounds(histogram(c.time_dim), W * k);
      if (plan.ordered) {  // rounds would reorder dependent iterations
        plan.schedule = BlockSchedule::wavefront(W, W * k);
        break;
      }
      if (options.rounds < 0)
        throw OptionError(fmt::format("LoopOptions::rounds must be 0 (automatic) or positive, not {}", options.rounds));
      const auto iterations = std::accumulate(hist.begin(), hist.end(), std::int64_t{0});
      if (options.slices_per_worker < 0 ||
          (options.slices_per_worker > 0 && options.rounds > 0 && options.rounds % options.slices_per_worker != 0))
        throw OptionError(fmt::format("LoopOptions::slices_per_worker must be 0 (automatic) or a positive divisor "
                                      "of rounds ({}), not {}",
                                      options.rounds, options.slices_per_worker));
      int slices = options.slices_per_worker > 0 ? options.slices_per_worker : auto_slices_per_worker(plan);
      const int q = options.rounds > 0 ? options.rounds : auto_rounds(iterations, W, W * k, slices);
      slices = std::min(slices, q);  // the slices must divide the rounds
      while (q % slices != 0) --slices;
      plan.slices_per_worker = slices;
      plan.slice_bounds = slices > 1 ? slice_bounds_of(plan.space_bounds, hist, slices) : std::vector<std::int64_t>{};
      plan.schedule = BlockSchedule::rotation(W, k, q);
      break;
    }
    case Strategy::two_d_skewed: {
      // Bounds over the transformed coordinates a = T0 . (p_s, p_t), b = T1 . (p_s, p_t).
      const auto& m = c.skew;
      auto corner = [&](int row, std::int64_t ps, std::int64_t pt) { return m[row][0] * ps + m[row][1] * pt; };
      std::int64_t lo[2], hi[2];
      for (int row = 0; row < 2; ++row) {
        const std::int64_t xs[] = {corner(row, 0, 0), corner(row, extents[s] - 1, 0), corner(row, 0, extents[t] - 1),
                                   corner(row, extents[s] - 1, extents[t] - 1)};
        lo[row] = *std::min_element(xs, xs + 4);
        hi[row] = *std::max_element(xs, xs + 4);
      }
      // Histograms in transformed coordinates need the iterations; an even split
      // of the transformed ranges is used (balanced per diagonal on average).
      auto even = [](std::int64_t a, std::int64_t b, int parts) {
        std::vector<std::int64_t> v;
        for (int q = 0; q <= parts; ++q) v.push_back(a + (b - a) * q / parts);
        return v;
      };
      // Across ranks the space parts are ranges of the space dimension (a = p_s), cut
      // by its histogram like a 2-D plan's.
      plan.space_bounds = plan.wavefront_ranks ? balanced_bounds(histogram(c.space_dim), Wp) : even(lo[0], hi[0] + 1, Wp);
      plan.time_bounds = even(lo[1], hi[1] + 1, Wp * k);
      plan.schedule = BlockSchedule::wavefront(Wp, Wp * k);
      break;
    }
  }
  if (plan.wavefront_ranks) {
    // Each rank runs the iterations of its workers' space parts (wavefront_ranks.hpp).
    const auto rank_bounds = rank_bounds_of(plan.space_bounds, P, T);
    space.repartition_to(Partition::range(c.space_dim, rank_bounds));
    lay_out_wavefront(plan, rank_bounds);
    return;
  }
  if (P == 1 || !(c.strategy == Strategy::one_d || c.strategy == Strategy::two_d ||
                  c.strategy == Strategy::data_parallel))
    return;

  // Across ranks: co-partition the iteration space and the arrays that follow it.
  const auto rank_bounds = rank_bounds_of(plan.space_bounds, P, T);
  space.repartition_to(Partition::range(c.space_dim, rank_bounds));
  for (auto& role : plan.roles) {
    auto* a = strata::detail::ArrayBase::find_array(role.array_id);
    if (!a || a == &space) continue;
    const auto shape = a->shape_vector();
    switch (role.placement) {
      case Placement::aligned:
        if (shape[static_cast<std::size_t>(role.array_dim)] != extents[s])
          throw ShapeError(fmt::format("loop at {}: array {} follows iteration dimension {} but its dimension {} has "
                                       "extent {}, not {}",
                                       plan.loop_site, role.name, c.space_dim, role.array_dim,
                                       shape[static_cast<std::size_t>(role.array_dim)], extents[s]));
        a->repartition_to(Partition::range(role.array_dim, rank_bounds));
        break;
      case Placement::travelling: {
        if (role.array_dim != 0 || a->is_sparse_array())
          throw OptionError(fmt::format("loop at {}: array {} must travel with the time blocks, which needs a dense "
                                        "array indexed by the time dimension in its first dimension",
                                        plan.loop_site, role.name));
        const std::int64_t row_bytes =
            shape[0] > 0 ? static_cast<std::int64_t>(a->element_size()) * [&] {
              std::int64_t v = 1;
              for (std::size_t d = 1; d < shape.size(); ++d) v *= shape[d];
              return v;
            }() : 0;
        for (int b = 0; b < plan.schedule.blocks; ++b) {
          const auto& users = plan.schedule.users[static_cast<std::size_t>(b)];
          for (std::size_t u = 1; u < users.size(); ++u)
            if (users[u] / T != users[u - 1] / T)
              plan.bytes_per_pass += (plan.time_bounds[static_cast<std::size_t>(b) + 1] -
                                      plan.time_bounds[static_cast<std::size_t>(b)]) * row_bytes;
          // The first hop: from the block's home (its last user) to its first user.
          if (users.back() / T != users.front() / T)
            plan.bytes_per_pass += (plan.time_bounds[static_cast<std::size_t>(b) + 1] -
                                    plan.time_bounds[static_cast<std::size_t>(b)]) * row_bytes;
        }
        // Between loops a rank holds the rows of the blocks it is home to, so a journey
        // starts and ends where the array lies, and during one a rank holds the blocks in
        // use (DistArray::travel_begin, run_schedule's releases).
        a->repartition_to(Partition::range(0, home_block_bounds(plan, P, T)));
        // A loop that only reads the array (an evaluation between passes) adopts its
        // workers' homes as its split, so the two loops do not move it back and forth.
        if (a->array_id() != 0) remember_split(a->array_id(), 0, home_block_bounds(plan, plan.workers, 1));
        break;
      }
      case Placement::cached: break;  // owners keep their shards; readers cache (ps::Table, src/ps)
      case Placement::local:
      case Placement::replicated:
        if (!role.written && !role.read) break;  // only written through a Buffer: nothing to place
        if (role.written || a->is_sparse_array())
          throw OptionError(fmt::format("loop at {}: array {} is {} with subscripts that follow neither the space "
                                        "nor the time dimension; across ranks only dense arrays the loop does not "
                                        "write can be replicated",
                                        plan.loop_site, role.name, role.written ? "written" : "a sparse array read"));
        role.placement = Placement::replicated;
        plan.bytes_per_pass += static_cast<std::int64_t>(a->element_size()) * [&] {
          std::int64_t v = 1;
          for (auto e : shape) v *= e;
          return v;
        }() * (P - 1);
        break;
    }
  }
}

}  // namespace strata::loop::detail
