// parallel_for: runs a serial loop body over a DistArray's iteration space on all
// workers (ranks x threads) while keeping every dependence the body creates through
// DistArray accesses: the parallel run equals some serial order of the iterations
// (the lexicographic one for dependent iterations when `ordered`).
//
//   strata::parallel_for(R, [&](const strata::Index<2>& ij, float& r) {
//     auto w = W.row(ij[0]);
//     auto h = H.row(ij[1]);
//     ...                                   // the serial loop's body, unchanged
//   });
//
// The first call at a loop site runs a reconnaissance pass (the body over this rank's
// iterations, or a sample of them for large loops, with accesses recorded and writes
// undone), fits subscripts, derives dependence vectors, chooses a strategy and lays
// arrays out for it; later calls reuse the plan while the iteration space and arrays
// keep their structure. A plan from a sample is checked access by access on its first
// run and replaced, with the run undone, if it does not hold.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/detail/stopwatch.hpp"
#include "strata/dist_array.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/checked.hpp"
#include "strata/loop/plan.hpp"
#include "strata/loop/recorder.hpp"
#include "strata/loop/schedule.hpp"
#include "strata/loop/undo.hpp"
#include "strata/loop/worker.hpp"

namespace strata {

namespace loop::detail {

/// Installs an observer on the calling thread for a scope.
class ObserverScope {
 public:
  ObserverScope(strata::detail::AccessObserver* o, bool recording) {
    strata::detail::t_observer = o;
    strata::detail::t_recording = recording;
  }
  ~ObserverScope() {
    strata::detail::t_observer = nullptr;
    strata::detail::t_recording = false;
  }
};

using strata::detail::seconds_since;

/// Index of local iteration `pos` of the space.
template <class Elem, std::size_t M>
Index<M> index_at(const DistArray<Elem, M>& space, std::int64_t pos) {
  if (space.is_sparse()) return space.local_keys()[static_cast<std::size_t>(pos)];
  const auto& box = space.local_box();
  Index<M> i{};
  for (std::size_t d = M; d-- > 0;) {
    i[d] = box[d].global(pos % box[d].size());
    pos /= box[d].size();
  }
  return i;
}

/// Which of a rank's n local iterations the reconnaissance pass visits: 1 in `stride`,
/// in runs of consecutive iterations (up to 4096, so rows the body reaches through
/// the first coordinate stay in cache; shorter for small spaces, so that at least
/// about 64 runs are chosen), picked by a hash of the run so the choice does not
/// alias with the period of a dimension.
class ReconSample {
 public:
  ReconSample(std::int64_t n, int stride) : stride_(std::max(stride, 1)) {
    while (run_bits_ < 12 && (n >> (run_bits_ + 1)) >= std::int64_t{64} * stride_) ++run_bits_;
  }
  bool has(std::int64_t pos) const {
    return stride_ == 1 || mix64(static_cast<std::uint64_t>(pos >> run_bits_)) <
                               ~std::uint64_t{0} / static_cast<std::uint64_t>(stride_);
  }
  /// The first position of the run after the one holding `pos`.
  std::int64_t next_run(std::int64_t pos) const { return ((pos >> run_bits_) + 1) << run_bits_; }

 private:
  int stride_;
  int run_bits_ = 0;
};

/// Runs the body once with accesses recorded over this rank's iterations (1 in
/// `stride` of them), on all of the rank's threads, each with its own recorder over a
/// contiguous share. The element handed to the body is a copy, so its writes are
/// dropped too.
///
/// The order of the pass does not change what it records, so a sparse space of two
/// or more dimensions is visited cache-consciously, as a 2-D pass would: in chunks of
/// 2^20 iterations, each chunk by tiles of about 1024 indices of the last dimension
/// (key order within a tile), from a packed copy of the chunk's indices and values.
/// Rows the body reads through its last coordinate then stay in cache across a tile
/// instead of being fetched from memory at almost every iteration.
template <class Elem, std::size_t M, class Body>
std::vector<Recorder> reconnoitre(DistArray<Elem, M>& space, Body& body, bool record_elements, int stride = 1) {
  Runtime& rt = space.runtime();
  const int T = rt.threads();
  std::vector<Recorder> recs;
  for (int t = 0; t < T; ++t) recs.emplace_back(static_cast<int>(M), record_elements);
  auto values = space.local_values();
  const auto n = static_cast<std::int64_t>(values.size());
  // Tiles of the last dimension are 2^shift indices wide (at least 1024, at most 4096
  // tiles): a shift, unlike a division, costs nothing per iteration.
  const std::int64_t extent = space.extent(M - 1);
  int shift = 10;
  while ((extent >> shift) > 4096) ++shift;
  const std::int64_t tiles = ((extent - 1) >> shift) + 1;
  // Element recording numbers iterations in key order; it keeps that order.
  const bool tiled = space.is_sparse() && M >= 2 && tiles > 1 && !record_elements;
  const ReconSample sample(n, stride);
  rt.pool().parallel_static(n, [&](std::int64_t begin, std::int64_t end, int t) {
    Recorder& rec = recs[static_cast<std::size_t>(t)];
    ObserverScope scope(&rec, true);
    auto visit = [&](const Index<M>& i, std::int64_t pos, Elem copy) {
      rec.begin_iteration(i, pos);
      body(i, copy);
    };
    if (!tiled) {
      for (std::int64_t run = begin; run < end; run = sample.next_run(run))
        if (sample.has(run))
          for (std::int64_t pos = run; pos < std::min(end, sample.next_run(run)); ++pos)
            visit(index_at(space, pos), pos, values[static_cast<std::size_t>(pos)]);
      return;
    }
    struct Item {
      Index<M> index;
      Elem value;
      std::int64_t pos;
    };
    const auto keys = space.local_keys();
    auto tile_of = [&](std::int64_t pos) {
      return static_cast<std::size_t>(keys[static_cast<std::size_t>(pos)][M - 1] >> shift);
    };
    constexpr std::int64_t kChunk = std::int64_t{1} << 20;
    std::vector<std::int64_t> chosen;
    std::vector<Item> items;
    std::vector<std::int64_t> start(static_cast<std::size_t>(tiles) + 1);
    for (std::int64_t c = begin; c < end; c += kChunk) {
      const std::int64_t c_end = std::min(end, c + kChunk);
      chosen.clear();
      for (std::int64_t run = c; run < c_end; run = sample.next_run(run))
        if (sample.has(run))
          for (std::int64_t pos = run; pos < std::min(c_end, sample.next_run(run)); ++pos) chosen.push_back(pos);
      std::fill(start.begin(), start.end(), 0);
      for (const std::int64_t pos : chosen) ++start[tile_of(pos) + 1];
      for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
      items.resize(chosen.size());
      for (const std::int64_t pos : chosen)
        items[static_cast<std::size_t>(start[tile_of(pos)]++)] = {keys[static_cast<std::size_t>(pos)],
                                                                  values[static_cast<std::size_t>(pos)], pos};
      for (const Item& it : items) visit(it.index, it.pos, it.value);
    }
  });
  return recs;
}

std::string loop_key(const std::source_location& where, std::uint64_t space_id, const LoopOptions& options);
bool plan_still_valid(const Plan& plan, Runtime& rt, std::uint64_t space_version);
void remember_versions(Plan& plan);
/// Bounds, schedule and array placement for the chosen strategy. `histogram(d)`
/// (collective) counts the iterations at each index of dimension d; it is called
/// only for the dimensions the strategy partitions.
void lay_out(Plan& plan, strata::detail::ArrayBase& space, const std::vector<std::int64_t>& extents,
             const std::function<std::vector<std::int64_t>(int)>& histogram, const LoopOptions& options);
void print_plan(Runtime& rt, const Plan& plan);
/// The reconnaissance stride for a loop over `iterations` iterations (all ranks).
int recon_stride_for(std::int64_t iterations, const LoopOptions& options);
/// Collective: applies at their owners the deltas the loop wrote through Buffers.
void flush_buffers(const Plan& plan);
/// Collective: the first non-empty message of any thread on any rank ("" if none).
std::string first_failure(Runtime& rt, const std::vector<std::string>& per_thread);

/// Reconnaissance (1 in `stride` iterations), analysis and layout: a new plan.
/// Collective. A plan from a sample is speculative (verified = false) unless its
/// strategy needs every access anyway (conflict groups), in which case the pass is
/// repeated in full.
template <class Elem, std::size_t M, class Body>
std::unique_ptr<Plan> build_plan(DistArray<Elem, M>& space, Body& body, const LoopOptions& options,
                                 const std::source_location& where, int stride) {
  Runtime& rt = space.runtime();
  auto plan = std::make_unique<Plan>();
  plan->loop_site = fmt::format("{}:{}", where.file_name(), where.line());
  plan->iter_dims = static_cast<int>(M);
  plan->ordered = options.ordered;
  plan->ranks = rt.size();
  plan->threads = rt.threads();
  plan->workers = rt.size() * rt.threads();
  plan->recon_stride = stride;
  plan->verified = stride == 1;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<SiteRecord> local_sites;
  std::int64_t accesses = 0;
  for (auto& rec : reconnoitre(space, body, false, stride)) {
    accesses += rec.accesses();
    local_sites.insert(local_sites.end(), rec.sites().begin(), rec.sites().end());
  }
  plan->recon_accesses = rt.comm().allreduce(accesses, ReduceOp::sum);
  plan->recon_seconds = rt.comm().allreduce(seconds_since(t0), ReduceOp::max);

  const auto t1 = std::chrono::steady_clock::now();
  plan->sites = merge_sites(rt, local_sites);
  std::vector<std::int64_t> extents(space.shape().begin(), space.shape().end());
  analyse(*plan, extents, options);
  using analysis::Strategy;
  const auto strategy = plan->choice.strategy;
  if (strategy == Strategy::groups && stride > 1) return build_plan(space, body, options, where, 1);
  lay_out(*plan, space, extents, [&](int d) { return space.histogram(d); }, options);

  // Work lists: this rank's iterations, per thread and step, in key order.
  const int T = rt.threads(), r = plan->gathered ? 0 : rt.rank();
  const auto n = space.local_nnz();
  const int steps = (strategy == Strategy::two_d || strategy == Strategy::two_d_skewed) ? plan->schedule.blocks : 1;
  plan->work.assign(static_cast<std::size_t>(T), std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(steps)));
  std::vector<std::int32_t> group_thread;
  if (strategy == Strategy::groups) {
    std::vector<analysis::ElementAccess> elements;
    for (auto& rec : reconnoitre(space, body, true))
      elements.insert(elements.end(), rec.elements().begin(), rec.elements().end());
    group_thread = group_threads(*plan, n, elements);
  }
  const int s = plan->choice.space_dim, t = plan->choice.time_dim;
  const auto& skew = plan->choice.skew;
  for (std::int64_t pos = 0; pos < n; ++pos) {
    const Index<M> i = index_at(space, pos);
    int thread = 0, step = 0;
    switch (strategy) {
      case Strategy::serial: break;
      case Strategy::data_parallel:
      case Strategy::one_d: thread = range_part(plan->space_bounds, i[static_cast<std::size_t>(s)]) - r * T; break;
      case Strategy::groups: thread = group_thread[static_cast<std::size_t>(pos)]; break;
      case Strategy::two_d:
      case Strategy::two_d_skewed: {
        std::int64_t a = i[static_cast<std::size_t>(s)], b = i[static_cast<std::size_t>(t)];
        if (strategy == Strategy::two_d_skewed) {
          const std::int64_t a2 = skew[0][0] * a + skew[0][1] * b, b2 = skew[1][0] * a + skew[1][1] * b;
          a = a2, b = b2;
        }
        const int w = range_part(plan->space_bounds, a);
        thread = w - r * T;
        step = plan->schedule.step_of(w, range_part(plan->time_bounds, b));
        break;
      }
    }
    STRATA_CHECK(thread >= 0 && thread < T, "an iteration was assigned to another rank's worker");
    plan->work[static_cast<std::size_t>(thread)][static_cast<std::size_t>(step)].push_back(
        static_cast<std::uint32_t>(pos));
  }
  if (strategy != Strategy::groups) {
    std::int64_t most = 0;
    for (const auto& w : plan->work) {
      std::int64_t c = 0;
      for (const auto& st : w) c += static_cast<std::int64_t>(st.size());
      most = std::max(most, c);
    }
    most = rt.comm().allreduce(most, ReduceOp::max);
    const double mean = static_cast<double>(space.nnz()) / (plan->gathered ? T : plan->workers);
    plan->imbalance = mean > 0 ? static_cast<double>(most) / mean : 1.0;
  }
  plan->plan_seconds = rt.comm().allreduce(seconds_since(t1), ReduceOp::max);
  plan->space_version = space.structure_version();
  remember_versions(*plan);
  if (options.explain) print_plan(rt, *plan);
  return plan;
}

/// Runs the loop once by `plan`. With `verify`, every access is also checked against
/// the plan's fitted subscripts; the first that does not fit stops its thread's
/// share of the run (the schedule still completes), and the run reports it: the
/// first such message of any thread on any rank, "" when every access fitted.
/// Collective.
template <class Elem, std::size_t M, class Body>
std::string run_plan(DistArray<Elem, M>& space, Body& body, Plan& plan, const LoopOptions& options, bool verify) {
  Runtime& rt = space.runtime();
  const auto run_start = std::chrono::steady_clock::now();
  using analysis::Strategy;
  // Work records are streamed in block order. A body that takes the element by value
  // or const reference gets a copy stored in the record (the element array is in key
  // order, so reading it through a pointer would miss the cache on every iteration);
  // a body that may modify the element gets a pointer to it.
  constexpr bool kReadsOnly = std::is_invocable_v<Body&, const Index<M>&, const Elem&>;
  struct Record {
    Index<M> index;
    std::conditional_t<kReadsOnly, Elem, Elem*> value;
  };
  if (plan.packed.empty()) {
    auto values = space.local_values();
    plan.packed.resize(plan.work.size());
    for (std::size_t th = 0; th < plan.work.size(); ++th)
      for (const auto& positions : plan.work[th]) {
        std::vector<Record> recs;
        recs.reserve(positions.size());
        for (const std::uint32_t pos : positions) {
          if constexpr (kReadsOnly) recs.push_back({index_at(space, pos), values[pos]});
          else recs.push_back({index_at(space, pos), &values[pos]});
        }
        auto& bytes = plan.packed[th].emplace_back(recs.size() * sizeof(Record));
        if (!recs.empty()) std::memcpy(bytes.data(), recs.data(), bytes.size());
      }
  }
  auto values_now = space.local_values();
  // The copies are refreshed only when the elements changed since they were made
  // (a sequential fingerprint costs far less than gathering them again).
  bool refresh = false;
  if constexpr (kReadsOnly) {
    const auto fp = fingerprint(std::as_bytes(values_now));
    refresh = fp != plan.packed_fingerprint;
    plan.packed_fingerprint = fp;
  }
  const int T = rt.threads(), r = plan.gathered ? 0 : rt.rank();

  // Checked mode, verification, or both: each thread checks its own accesses.
  const bool checked = options.checked || checked_by_environment();
  std::vector<std::unique_ptr<CheckedObserver>> checkers;
  if (checked || verify)
    for (int th = 0; th < T; ++th) checkers.push_back(std::make_unique<CheckedObserver>(plan, checked, verify));
  std::vector<std::string> failures(static_cast<std::size_t>(T));

  // Arrays the loop only reads at subscripts that follow no partitioned dimension:
  // every rank reads a whole copy during the run.
  std::vector<strata::detail::ArrayBase*> replicas;
  if (rt.size() > 1 && !plan.gathered)
    for (const auto& role : plan.roles)
      if (role.placement == Placement::replicated) {
        auto* a = strata::detail::ArrayBase::find_array(role.array_id);
        a->travel_begin();
        replicas.push_back(a);
      }

  // One step of one thread: its work records, body by body.
  auto run_step = [&](int th, int step, int block) {
    CheckedObserver* checker = checkers.empty() ? nullptr : checkers[static_cast<std::size_t>(th)].get();
    if (checker && checked) {
      const int w = r * T + th;
      const std::int64_t lo = plan.space_bounds.empty() ? 0 : plan.space_bounds[static_cast<std::size_t>(w)];
      const std::int64_t hi = plan.space_bounds.empty() ? 0 : plan.space_bounds[static_cast<std::size_t>(w) + 1];
      std::int64_t tlo = 0, thi = 0;
      if (block >= 0 && !plan.time_bounds.empty())
        tlo = plan.time_bounds[static_cast<std::size_t>(block)], thi = plan.time_bounds[static_cast<std::size_t>(block) + 1];
      checker->set_bounds(lo, hi, tlo, thi);
    }
    auto& packed = plan.packed[static_cast<std::size_t>(th)][static_cast<std::size_t>(step)];
    const auto& positions = plan.work[static_cast<std::size_t>(th)][static_cast<std::size_t>(step)];
    auto* rec = reinterpret_cast<Record*>(packed.data());
    const std::size_t n = packed.size() / sizeof(Record);
    if constexpr (kReadsOnly)
      if (refresh)
        for (std::size_t k = 0; k < n; ++k) rec[k].value = values_now[positions[k]];
    ObserverScope scope(checker, false);
    if (!verify) {
      for (std::size_t k = 0; k < n; ++k) {
        if constexpr (kReadsOnly) body(rec[k].index, rec[k].value);
        else body(rec[k].index, *rec[k].value);
      }
      return;
    }
    // Verifying: after the first access that does not fit, this thread runs nothing
    // more (the access itself never happened, so the run can be undone).
    std::string& failure = failures[static_cast<std::size_t>(th)];
    if (!failure.empty()) return;
    try {
      for (std::size_t k = 0; k < n; ++k) {
        checker->begin_iteration(rec[k].index);
        if constexpr (kReadsOnly) body(rec[k].index, rec[k].value);
        else body(rec[k].index, *rec[k].value);
      }
    } catch (const SpeculationFailed& e) {
      failure = e.what();
    }
  };
  auto finish = [&] {
    for (auto* a : replicas) a->travel_drop();
    plan.last_run_seconds = seconds_since(run_start);
    rt.comm().barrier();
    remember_versions(plan);
    return verify ? first_failure(rt, failures) : std::string();
  };

  const auto strategy = plan.choice.strategy;
  if (strategy != Strategy::two_d && strategy != Strategy::two_d_skewed) {
    rt.pool().run([&](int th) {
      strata::detail::t_worker = th;
      run_step(th, 0, -1);
      strata::detail::t_worker = 0;
    });
    plan.last_wait_seconds = 0;
    return finish();
  }

  // 2-D: arrays that follow the time dimension travel between ranks with the blocks.
  std::vector<strata::detail::ArrayBase*> travelling;
  std::vector<TravellingArray> rows;
  if (rt.size() > 1)
    for (const auto& role : plan.roles)
      if (role.placement == Placement::travelling) {
        auto* a = strata::detail::ArrayBase::find_array(role.array_id);
        a->travel_begin();
        travelling.push_back(a);
        const auto shape = a->shape_vector();
        const auto bytes = a->local_bytes();
        rows.push_back({bytes, shape[0] > 0 ? static_cast<std::int64_t>(bytes.size()) / shape[0] : 0, plan.time_bounds});
      }
  plan.last_wait_seconds = run_schedule(rt, plan.schedule, rows, run_step, plan.gathered);
  if (!travelling.empty()) {
    std::vector<int> held;
    for (int b = 0; b < plan.schedule.blocks; ++b)
      if (plan.schedule.users[static_cast<std::size_t>(b)].back() / T == r) held.push_back(b);
    for (auto* a : travelling) a->travel_end(plan.time_bounds, held);
  }
  return finish();
}

}  // namespace loop::detail

/// Builds (or fetches from the cache) the plan of the loop at `where`. Collective.
template <class Elem, std::size_t M, class Body>
loop::Plan& plan_loop(DistArray<Elem, M>& space, Body& body, const LoopOptions& options = {},
                      std::source_location where = std::source_location::current()) {
  Runtime& rt = space.runtime();
  const std::string key = loop::detail::loop_key(where, space.array_id(), options);
  auto& cache = loop::PlanCache::instance();
  if (loop::Plan* p = cache.find(key); p && loop::detail::plan_still_valid(*p, rt, space.structure_version()))
    return *p;
  const int stride = loop::detail::recon_stride_for(space.nnz(), options);
  return cache.store(key, loop::detail::build_plan(space, body, options, where, stride));
}

/// Runs `body(index, value)` for every element of `space` in parallel and returns the
/// plan it used. The body may take the element by value, const reference, or
/// reference (to modify it). Collective.
///
/// The first run of a plan built from a sampled reconnaissance is speculative: every
/// access is checked against the plan, and if one does not fit, everything the run
/// changed (the arrays it writes, the space's elements, accumulators) is restored,
/// the loop is planned again from a full reconnaissance pass and run by that plan.
template <class Elem, std::size_t M, class Body>
const loop::Plan& parallel_for(DistArray<Elem, M>& space, Body&& body, const LoopOptions& options = {},
                               std::source_location where = std::source_location::current()) {
  Runtime& rt = space.runtime();
  loop::Plan* plan = &plan_loop(space, body, options, where);
  if (!plan->verified) {
    std::vector<strata::detail::ArrayBase*> changed;
    for (const auto& role : plan->roles)
      if (role.written) changed.push_back(strata::detail::ArrayBase::find_array(role.array_id));
    if constexpr (!std::is_invocable_v<Body&, const Index<M>&, const Elem&>) changed.push_back(&space);
    strata::detail::RunSnapshot before(changed);
    std::string failure = loop::detail::run_plan(space, body, *plan, options, true);
    if (failure.empty()) {
      plan->verified = true;
      loop::detail::flush_buffers(*plan);
      return *plan;
    }
    before.restore();
    rt.debug("loop at {}: the plan from a sampled reconnaissance does not hold ({}); planning again from a full "
             "pass", plan->loop_site, failure);
    auto full = loop::detail::build_plan(space, body, options, where, 1);
    full->speculation_failure = std::move(failure);
    plan = &loop::PlanCache::instance().store(loop::detail::loop_key(where, space.array_id(), options),
                                              std::move(full));
  }
  loop::detail::run_plan(space, body, *plan, options, false);
  loop::detail::flush_buffers(*plan);
  return *plan;
}

/// The serial order the last run of a plan is equivalent to: every iteration's index,
/// gathered from all ranks (collective). Replaying the body in this order on one
/// thread reproduces the parallel result bit for bit.
template <class Elem, std::size_t M>
std::vector<Index<M>> equivalent_order(const DistArray<Elem, M>& space, const loop::Plan& plan) {
  struct Item {
    std::int64_t step, worker, seq;
    Index<M> index;
  };
  std::vector<Item> mine;
  const int T = plan.threads, r = space.runtime().rank();
  for (int th = 0; th < T; ++th) {
    std::int64_t seq = 0;
    const auto& steps = plan.work[static_cast<std::size_t>(th)];
    for (std::size_t st = 0; st < steps.size(); ++st)
      for (const auto pos : steps[st])
        mine.push_back({static_cast<std::int64_t>(st), r * T + th, seq++, loop::detail::index_at(space, pos)});
  }
  // Steps are positions in each worker's order; with 2-D plans all workers advance
  // through the same number of steps, so (step, worker, seq) is a valid serial order.
  Bytes buf;
  strata::detail::append_span<Item>(buf, mine);
  std::vector<Item> all;
  for (const auto& part : space.runtime().comm().allgatherv(buf)) {
    const auto v = strata::detail::as_vector<Item>(part);
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) {
    return std::tie(a.step, a.worker, a.seq) < std::tie(b.step, b.worker, b.seq);
  });
  std::vector<Index<M>> out;
  for (const auto& it : all) out.push_back(it.index);
  return out;
}

}  // namespace strata
