// Executing a loop plan once: work records streamed per thread and step, checked or
// speculative runs, replicated and travelling arrays, the 2-D block schedule.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <climits>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/free_now.hpp"
#include "loop/checked.hpp"
#include "loop/index_reader.hpp"
#include "loop/loop_internal.hpp"
#include "loop/relaxed_run.hpp"
#include "loop/run_claims.hpp"
#include "loop/spread.hpp"
#include "loop/wavefront_ranks.hpp"
#include "loop/windows.hpp"
#include "strata/detail/huge_pages.hpp"

namespace strata::loop::detail {
namespace {

// Records [from, to) of one step of one thread.
using StepRunner = std::function<void(int th, int step, int block, std::size_t from, std::size_t to)>;

/// A one-step run over relaxed arrays: every thread runs `clock_every` iterations,
/// then the rank's threads meet and the clock ends on every table (deltas out, the
/// staleness wait, fresh blocks in); the call has the same number of clocks on
/// every rank. An error in one thread is kept until every clock has been gone
/// through (the other ranks are waiting for this rank's deltas), then thrown.
void run_clocked(Runtime& rt, RelaxedRun& relaxed, const StepRunner& run_step) {
  const int T = rt.threads();
  const std::int64_t every = relaxed.clock_every();
  std::barrier meet(T, [&]() noexcept { relaxed.tick(); });
  // One-rank tables apply their clocks themselves; the threads share that work.
  const bool share = T > 1 && relaxed.splits_ticks();
  std::barrier stop(T, [&]() noexcept { relaxed.prepare_tick(T); });
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(T));
  std::atomic<bool> failed{false};
  rt.pool().run([&](int th) {
    strata::detail::WorkerScope worker(th);
    for (std::int64_t c = 0; c < relaxed.clocks(); ++c) {
      strata::detail::t_clock = c;
      if (!failed.load(std::memory_order_relaxed) && !relaxed.failed()) {
        try {
          if (every > 0) run_step(th, 0, -1, static_cast<std::size_t>(c * every), static_cast<std::size_t>((c + 1) * every));
          else run_step(th, 0, -1, 0, SIZE_MAX);
        } catch (...) {
          errors[static_cast<std::size_t>(th)] = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
      if (share) {
        stop.arrive_and_wait();
        relaxed.tick_part(th, T);
      }
      meet.arrive_and_wait();
    }
    strata::detail::t_clock = 0;
  });
  for (auto& e : errors)
    if (e) {
      relaxed.end();
      std::rethrow_exception(e);
    }
}

// The layout of a plan's records, narrow, compact (32-bit subscripts) or wide, and
// the body's loop over them.
struct Records {
  std::size_t size, value_offset;
  LoopBody::RunRecords run;
};
Records records_of(const LoopBody& body, const Plan& plan) {
  if (plan.narrow_records) return {body.narrow_record_size, body.narrow_value_offset, body.run_narrow};
  if (plan.compact_records) return {body.compact_record_size, body.compact_value_offset, body.run_compact};
  return {body.record_size, body.value_offset, body.run};
}

// Whether every list of every thread spans at most 2^16 indices in each dimension,
// from the bounds fill_work_lists found; if so they become packed_base, what each
// list's narrow subscripts count from. A 2-D plan's lists are its blocks: mf's 10M
// ratings at 2 workers span some 25,000 users and 900 items per list, so its records
// shrink from 16 bytes to 8.
bool lists_fit_narrow(const SpaceView& space, Plan& plan) {
  const auto dims = static_cast<std::size_t>(space.dims);
  bool fits = true;
  for (std::size_t th = 0; th < plan.list_lo.size(); ++th)
    for (std::size_t step = 0; step < plan.list_lo[th].size(); ++step)
      for (std::size_t d = 0; d < dims && plan.list_sizes[th][step] > 0; ++d)
        fits = fits && plan.list_hi[th][step][d] - plan.list_lo[th][step][d] <= UINT16_MAX;
  if (fits) {
    plan.packed_base = std::move(plan.list_lo);
    for (auto& lists : plan.packed_base)
      for (auto& base : lists)
        for (auto& v : base) v = v == INT64_MAX ? 0 : v;  // an empty list's
  }
  strata::detail::free_now(plan.list_lo);
  strata::detail::free_now(plan.list_hi);
  return fits;
}

// Work records are streamed in block order. A body that takes the element by value
// or const reference gets a copy stored in the record (the element array is in key
// order, so reading it through a pointer would miss the cache on every iteration);
// a body that may modify the element gets a pointer to it.
// Each thread packs its own records (in parallel; its pages are first touched by the
// thread that streams them).
void pack_records(const SpaceView& space, const LoopBody& body, Plan& plan) {
  plan.compact_records = std::all_of(space.shape.begin(), space.shape.end(),
                                     [](std::int64_t extent) { return extent <= INT32_MAX; });
  STRATA_CHECK(static_cast<int>(plan.work.size()) == space.rt->threads(), "a plan's work lists are per thread");
  const auto& list_of = plan.list_of_position;
  plan.narrow_records = body.narrow_record_size > 0 && lists_fit_narrow(space, plan);
  const bool compact = plan.compact_records, narrow = plan.narrow_records;
  const Records layout = records_of(body, plan);
  const std::size_t rs = layout.size, vo = layout.value_offset, es = space.elem_size;
  const auto dims = static_cast<std::size_t>(space.dims);
  const std::size_t index_bytes = dims * sizeof(std::int64_t);
  plan.packed.resize(plan.work.size());
  const bool in_order = list_of.size() == static_cast<std::size_t>(space.local_nnz);
  space.rt->pool().run([&](int thread) {
    with_index_reader(space, [&](const auto index_of) {
      const auto th = static_cast<std::size_t>(thread);
      std::int64_t buf[4];
      auto pack = [&](std::byte* rec, std::uint32_t pos, std::size_t step) {
        const std::int64_t* at = index_of(pos, buf);
        if (narrow) {
          const auto& base = plan.packed_base[th][step];
          std::uint16_t offset[4];
          for (std::size_t d = 0; d < index_of.dims; ++d) offset[d] = static_cast<std::uint16_t>(at[d] - base[d]);
          std::memcpy(rec, offset, index_of.dims * sizeof(std::uint16_t));
        } else if (compact) {
          std::int32_t narrow32[4];
          for (std::size_t d = 0; d < index_of.dims; ++d) narrow32[d] = static_cast<std::int32_t>(at[d]);
          copy_field(rec, narrow32, index_of.dims * sizeof(std::int32_t));
        } else {
          copy_field(rec, at, index_bytes);
        }
        std::byte* value = space.values + static_cast<std::size_t>(pos) * es;
        if (body.reads_only) copy_field(rec + vo, value, es);
        else std::memcpy(rec + vo, &value, sizeof value);
      };
      const auto& lists = plan.work[th];
      const auto& sizes = plan.list_sizes[th];
      auto& out = plan.packed[th];
      for (const auto size : sizes) out.emplace_back(size * rs);
      if (!in_order) {
        for (std::size_t step = 0; step < lists.size(); ++step) {
          std::byte* rec = out[step].data();
          for (const std::uint32_t pos : lists[step]) pack(rec, pos, step), rec += rs;
        }
        return;
      }
      // Every list in position order: one pass over the thread's positions reads the
      // keys and values in order (read list by list, they were a strided gather). The
      // lists themselves may never have been listed (plan.positions_dropped).
      std::vector<std::byte*> cursor;
      for (std::size_t step = 0; step < sizes.size(); ++step) cursor.push_back(out[step].data());
      std::size_t lo = 0, hi = list_of.size();  // the positions to read: [lo, hi)
      if (!plan.thread_positions.empty()) {
        lo = static_cast<std::size_t>(plan.thread_positions[th]);
        hi = static_cast<std::size_t>(plan.thread_positions[th + 1]);
      }
      const std::size_t first = th * sizes.size();
      for (std::size_t pos = lo; pos < hi; ++pos) {
        const std::size_t step = list_of[pos] - first;
        if (step >= sizes.size()) continue;  // another thread's (wrapped below `first` too)
        pack(cursor[step], static_cast<std::uint32_t>(pos), step);
        cursor[step] += rs;
      }
    });
  });
  strata::detail::free_now(plan.list_of_position);
  plan.record_size = rs;
  if (!plan.positions_dropped && positions_can_go(plan, body)) drop_positions(plan);
  // The copies of the elements are as of now.
  if (body.reads_only && !plan.hosted)
    plan.packed_fingerprint = fingerprint({space.values, static_cast<std::size_t>(space.local_nnz) * es});
  plan.packed_values = space.values;
}

// Records that point at their elements, moved by the distance their storage moved.
void follow_moved_elements(const SpaceView& space, const LoopBody& body, Plan& plan) {
  if (body.reads_only || plan.packed_values == space.values) return;
  const Records layout = records_of(body, plan);
  // (As addresses: the old storage is gone.)
  const std::uintptr_t moved =
      reinterpret_cast<std::uintptr_t>(space.values) - reinterpret_cast<std::uintptr_t>(plan.packed_values);
  space.rt->pool().run([&](int th) {
    for (auto& list : plan.packed[static_cast<std::size_t>(th)])
      for (std::size_t at = layout.value_offset; at + sizeof(std::uintptr_t) <= list.size(); at += layout.size) {
        std::uintptr_t element;
        std::memcpy(&element, list.data() + at, sizeof element);
        element += moved;  // modulo 2^64: a move down wraps round
        std::memcpy(list.data() + at, &element, sizeof element);
      }
  });
  plan.packed_values = space.values;
}

// Speculative runs: each iteration's index goes to the checker first. Once one thread
// has met an access the plan does not cover, the others stop at their next iteration.
// With split groups, iterations also take and drop their locks.
class VerifyHook final : public IterationHook {
 public:
  VerifyHook(CheckedObserver& checker, int dims, const std::atomic<bool>& abandoned, SplitLocks* locks)
      : checker_(checker), dims_(static_cast<std::size_t>(dims)), abandoned_(abandoned), locks_(locks) {
    checker_.lock_with(locks);
  }
  ~VerifyHook() { checker_.lock_with(nullptr); }
  VerifyHook(const VerifyHook&) = delete;
  VerifyHook& operator=(const VerifyHook&) = delete;
  void before(const std::int64_t* index) override {
    if (abandoned_.load(std::memory_order_relaxed)) [[unlikely]]
      throw RunAbandoned{};
    checker_.begin_iteration({index, dims_});
    if (locks_) locks_->begin_iteration();
  }
  void after() override {
    if (locks_) locks_->end_iteration();
  }

 private:
  CheckedObserver& checker_;
  std::size_t dims_;
  const std::atomic<bool>& abandoned_;
  SplitLocks* locks_;
};

// Managed communication takes deltas between iterations.
class OfferHook final : public IterationHook {
 public:
  OfferHook(const RelaxedRun& run, int th) : run_(run), th_(th) {}
  void before(const std::int64_t*) override {}
  void after() override { run_.offer(th_); }

 private:
  const RelaxedRun& run_;
  int th_;
};

}  // namespace

void pack_ahead(const SpaceView& given, const LoopBody& body, Plan& plan) {
  // A spread plan's hosted iterations are refreshed by its run first.
  if (plan.packed.empty() && !plan.hosted) pack_records(run_view(plan, given), body, plan);
}

bool strategy_has_one_step(const Plan& plan) {
  const auto s = plan.choice.strategy;
  return s != analysis::Strategy::two_d && s != analysis::Strategy::two_d_skewed;
}

std::string run_plan(const SpaceView& given, const LoopBody& body, Plan& plan, const LoopOptions& options,
                     bool verify) {
  // Groups spread over the ranks run on their hosted iterations, and always claim
  // what they touch: the claims say which units each rank wrote (spread.hpp).
  const std::uint64_t sent_before = given.rt->comm().bytes_sent_total();
  if (options.release_travelling_above < -1)
    throw OptionError(fmt::format("LoopOptions::release_travelling_above must be -1 (automatic) or a number of "
                                  "bytes, not {}",
                                  options.release_travelling_above));
  bool hosted_changed = false;
  if (plan.hosted) {
    hosted_changed = refresh_hosted(*plan.hosted, given.refreshed());
    verify = verify || plan.ownership != nullptr;
  }
  const SpaceView space = run_view(plan, given);
  Runtime& rt = *space.rt;
  const auto run_start = std::chrono::steady_clock::now();
  const bool packed_now = plan.packed.empty();
  if (packed_now) pack_records(space, body, plan);
  else follow_moved_elements(space, body, plan);
  // The copies are refreshed only when the elements changed since they were made
  // (a sequential fingerprint costs far less than gathering them again).
  // (Hosted elements change only when refresh_hosted copies them again.)
  bool refresh = hosted_changed && !packed_now;
  if (body.reads_only && !plan.hosted && !packed_now) {  // packing took the fingerprint
    const auto fp = fingerprint({space.values, static_cast<std::size_t>(space.local_nnz) * space.elem_size});
    refresh = fp != plan.packed_fingerprint;
    plan.packed_fingerprint = fp;
  }
  if (refresh) restore_positions(space, plan);  // a refresh copies the elements by position
  const int T = rt.threads(), r = plan.gathered ? 0 : rt.rank();

  // Checked mode, verification, or both: each thread checks its own accesses.
  const bool checked = options.checked || checked_by_environment();
  std::vector<std::unique_ptr<CheckedObserver>> checkers;
  // Re-validating a groups plan: each thread claims what it touches, straight from
  // the accessors (RunClaims) unless an observer watches the run anyway.
  OwnershipTable* owners = verify && plan.ownership ? plan.ownership.get() : nullptr;
  if (owners) owners->reset();
  // A run that throws (the body, checked mode) leaves its writes as they are, as it
  // always has, but gives back its write logs now rather than at the next run.
  struct DropLogs {
    OwnershipTable* owners;
    ~DropLogs() {
      if (owners) owners->drop_logs();
    }
  } drop_logs_on_exit{owners};
  // Split groups lock what they touch; their locks live in the table's states.
  SplitGroups* split = owners ? plan.split.get() : nullptr;
  if (split) split->reset(T);
  const bool claims_only = owners && plan.verified && !checked && relaxed_arrays(plan).empty();
  // Claims only: the accessors take the common ones in place while the run lasts.
  struct AttachedViews {
    OwnershipTable* table;
    ~AttachedViews() {
      if (table) table->detach_views();
    }
  } attached{claims_only ? owners : nullptr};
  if (claims_only) owners->attach_views();
  if (checked || (verify && !claims_only))
    for (int th = 0; th < T; ++th) {
      checkers.push_back(std::make_unique<CheckedObserver>(plan, checked, verify));
      if (owners) checkers.back()->watch(owners, th);
    }
  // A verifying run of a partitioned plan passes the accesses to rows only the
  // running worker can touch in place (loop/windows.hpp); checked mode sees them all.
  std::optional<VerifyWindows> windows;
  // (Not in a wavefront across ranks, whose threads log every write.)
  if (verify && !checked && !owners && !plan.hosted && !plan.wavefront_ranks && relaxed_arrays(plan).empty())
    windows.emplace(plan, r, T);
  std::vector<std::string> failures(static_cast<std::size_t>(T));
  std::atomic<bool> abandoned{false};

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

  // Spread groups: the arrays the loop touches in place, on every rank (what its
  // groups touch of those it writes, the rest whole).
  std::optional<CallCopies> copies;
  if (plan.hosted) copies.emplace(plan, /*whole=*/false);

  // Relaxed arrays: their tables start a run; the body's reads of them go to the
  // caches through each thread's observer.
  RelaxedRun relaxed(plan);
  const bool single_step = strategy_has_one_step(plan);
  if (relaxed.active()) {
    std::int64_t most = 0;
    if (single_step && relaxed.clock_every() > 0)
      for (const auto& steps : plan.work) most = std::max<std::int64_t>(most, static_cast<std::int64_t>(steps[0].size()));
    relaxed.begin(rt, plan, most);
    for (int th = 0; th < T; ++th)
      relaxed.make_observer(th, checkers.empty() ? nullptr : checkers[static_cast<std::size_t>(th)].get());
    // Cached reads and Buffer adds skip the observers. A data-parallel plan places
    // nothing by its relaxed arrays (their tables serve any unit, any worker may add
    // anywhere), so a verifying run need not see those accesses; checked mode does.
    if (checkers.empty() || (!checked && plan.choice.strategy == analysis::Strategy::data_parallel))
      relaxed.share_caches();
  }

  // A skewed wavefront across ranks: the writes its tiles pass on (below).
  std::unique_ptr<WriteTrail> trail;
  const bool trail_logs = plan.wavefront_ranks && rt.rank() + 1 < rt.size();

  const Records records = records_of(body, plan);
  const StepRunner run_step = [&](int th, int step, int block, std::size_t from, std::size_t to) {
    CheckedObserver* checker = checkers.empty() ? nullptr : checkers[static_cast<std::size_t>(th)].get();
    if (windows) windows->enter_block(th, block);
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
    const std::size_t rs = records.size;
    const std::size_t n = std::min(to, packed.size() / rs);
    const std::int64_t* base =
        plan.narrow_records ? plan.packed_base[static_cast<std::size_t>(th)][static_cast<std::size_t>(step)].data()
                            : nullptr;
    if (refresh)
      for (std::size_t k = from; k < n; ++k)
        copy_field(packed.data() + k * rs + records.value_offset,
                   space.values + static_cast<std::size_t>(positions[k]) * space.elem_size, space.elem_size);
    // A wavefront across ranks logs the tile's writes, to pass them on.
    const WriteTrail::Scope logged(trail_logs ? trail.get() : nullptr, th, block,
                                   relaxed.active() ? relaxed.observer_of(th) : checker);
    ObserverScope scope(logged.observer(), false);
    // Direct cache reads are counted per thread; the tables get the counts when the
    // step ends, however it ends.
    struct CountReads {
      const RelaxedRun& run;
      int th;
      ~CountReads() {
        if (run.active()) run.count_cache_reads(th);
      }
    } count_reads{relaxed, th};
    if (!verify) {
      OfferHook offer(relaxed, th);
      records.run(body.body, packed.data(), from, n, base, relaxed.managed() ? &offer : nullptr);
      return;
    }
    // Verifying: after the first access that does not fit, this thread runs nothing
    // more (the access itself never happened, so the run can be undone).
    std::string& failure = failures[static_cast<std::size_t>(th)];
    if (!failure.empty() || abandoned.load(std::memory_order_relaxed)) return;
    try {
      std::optional<SplitLocks> locks;
      if (split) locks.emplace(*split, *owners, from, th, abandoned);
      SplitLocks* held = locks ? &*locks : nullptr;
      if (claims_only) {
        RunClaims claims(*owners, th, space.dims, abandoned, held);
        // A rank's only worker that merely marks what it touches needs no hook: no other
        // thread can abandon the run, and a refusal (a write the plan never saw) names
        // the access without its iteration.
        records.run(body.body, packed.data(), from, n, base, owners->marks_only() ? nullptr : &claims);
      } else {
        VerifyHook hook(*checker, space.dims, abandoned, held);
        records.run(body.body, packed.data(), from, n, base, &hook);
      }
    } catch (const SpeculationFailed& e) {
      failure = e.what();
      abandoned.store(true, std::memory_order_relaxed);
    } catch (const RunAbandoned&) {
    }
  };
  auto finish = [&] {
    if (relaxed.active()) relaxed.end();
    for (auto* a : replicas) a->travel_drop();
    std::string failure = verify ? first_failure(rt, failures) : std::string();
    if (copies && failure.empty() && owners) failure = copies->merge(rt, *owners);
    // A refused run's writes are undone from the logs while the storage is still as the
    // run left it (a spread plan's copies address the whole array); the caller's
    // snapshot undoes the arrays the table does not log (loop/ownership.hpp).
    if (owners) {
      if (!failure.empty()) owners->undo_logged_writes();
      owners->drop_logs();
    }
    copies.reset();
    plan.last_run_seconds = seconds_since(run_start);
    const auto sent = static_cast<std::int64_t>(rt.comm().bytes_sent_total() - sent_before);
    plan.last_bytes_moved = rt.size() > 1 ? rt.comm().allreduce(sent, ReduceOp::sum) : 0;  // a collective: the barrier
    remember_versions(plan);
    return failure;
  };

  if (single_step && relaxed.active()) {
    run_clocked(rt, relaxed, run_step);
    plan.last_wait_seconds = 0;
    return finish();
  }
  if (single_step) {
    rt.pool().run([&](int th) {
      strata::detail::WorkerScope worker(th);
      run_step(th, 0, -1, 0, SIZE_MAX);
    });
    plan.last_wait_seconds = 0;
    return finish();
  }

  if (plan.wavefront_ranks && rt.size() > 1) {
    // Banded arrays hold their part and halo rows, the others the whole array, and the
    // writes pass from rank to rank with the blocks (wavefront_ranks.hpp).
    WavefrontArrays arrays(plan, rt);
    trail = std::make_unique<WriteTrail>(arrays.written(), arrays.read_only(), T, plan.schedule.blocks, trail_logs);
    // The thread that passes the blocks on runs its tiles in pieces and lets MPI move
    // its earlier messages between them: MPI moves a message only while the sender calls
    // into it, and the next rank waits for it.
    const auto run_tile = [&](int th, int step, int block) {
      if (th != T - 1 || !trail_logs) return run_step(th, step, block, 0, SIZE_MAX);
      constexpr std::size_t kBetweenCalls = 1024;
      const std::size_t n = plan.list_sizes[static_cast<std::size_t>(th)][static_cast<std::size_t>(step)];
      for (std::size_t from = 0; from < n; from += kBetweenCalls) {
        run_step(th, step, block, from, from + kBetweenCalls);
        rt.comm().finished_sends();
      }
    };
    std::exception_ptr failed;  // a tile that threw (the body, checked mode): on every rank
    plan.last_wait_seconds = run_wavefront_across_ranks(rt, plan.schedule, *trail, run_tile, failed);
    strata::detail::agree_on_error(rt.comm(), failed);
    const std::string refused = first_failure(rt, {trail->refusal()});
    trail.reset();
    arrays.finish();
    const std::string failure = finish();
    if (!refused.empty() && !verify) throw Error(fmt::format("loop at {}: {}", plan.loop_site, refused));
    return failure.empty() ? refused : failure;
  }

  // 2-D: arrays that follow the time dimension travel between ranks with the blocks.
  // Between calls a rank holds the blocks it is home to; during one, the blocks in use
  // (the schedule releases a block's pages once it has been sent on).
  std::vector<strata::detail::ArrayBase*> travelling;
  std::vector<TravellingArray> rows;
  const std::vector<int> home_rank = plan.schedule.home_ranks(T);
  if (rt.size() > 1 && !plan.gathered)  // a gathered plan's arrays are all on rank 0
    for (const auto& role : plan.roles)
      if (role.placement == Placement::travelling) {
        auto* a = strata::detail::ArrayBase::find_array(role.array_id);
        a->travel_begin(plan.time_bounds, home_rank);
        travelling.push_back(a);
        const auto shape = a->shape_vector();
        const auto bytes = a->local_bytes();
        rows.push_back({bytes, shape[0] > 0 ? static_cast<std::int64_t>(bytes.size()) / shape[0] : 0, plan.time_bounds});
      }
  std::int64_t travelling_bytes = 0;
  for (const auto& a : rows) travelling_bytes += static_cast<std::int64_t>(a.storage.size());
  const std::int64_t release_above =
      options.release_travelling_above >= 0
          ? options.release_travelling_above
          : static_cast<std::int64_t>(std::min<std::uint64_t>(strata::detail::machine_memory() / 16, INT64_MAX));
  plan.last_wait_seconds = run_schedule(rt, plan.schedule, rows,
                                        [&](int th, int step, int block) { run_step(th, step, block, 0, SIZE_MAX); },
                                        plan.gathered, travelling_bytes > release_above);
  if (relaxed.active()) relaxed.tick();  // a 2-D run over relaxed arrays is one clock
  for (auto* a : travelling) a->travel_end(plan.time_bounds, home_rank);
  return finish();
}

}  // namespace strata::loop::detail
