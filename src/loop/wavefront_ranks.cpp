// Skewed 2-D wavefronts on every rank (wavefront_ranks.hpp has the rule).
#include "loop/wavefront_ranks.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/detail/stopwatch.hpp"
#include "strata/detail/worker.hpp"
#include "strata/error.hpp"
#include "strata/runtime.hpp"

namespace strata::loop::detail {

using strata::detail::AccessMode;
using strata::detail::ArrayBase;

bool wavefront_fits_ranks(const Plan& plan, const ArrayBase& space) {
  const auto& skew = plan.choice.skew;
  if (skew[0][0] != 1 || skew[0][1] != 0)
    return false;  // space parts are not ranges of the space dimension
  if (!relaxed_arrays(plan).empty()) return false;
  for (const auto& role : plan.roles) {
    if (!role.written && !role.read) continue;  // only written through a Buffer
    const ArrayBase* a = ArrayBase::find_array(role.array_id);
    if (!a || a == &space || a->is_sparse_array() || role.placement == Placement::cached)
      return false;
  }
  return true;
}

namespace {

// Bounds of a banded array's rows: the ranks' bounds of the space, clamped to its rows
// (rows past the space's extent belong to the last rank).
std::vector<std::int64_t> band_bounds(const std::vector<std::int64_t>& rank_bounds,
                                      std::int64_t rows) {
  std::vector<std::int64_t> b;
  for (const auto x : rank_bounds) b.push_back(std::min(x, rows));
  b.back() = rows;
  return b;
}

// Whether the role's array can be banded (see lay_out_wavefront), and its halos.
void band(const Plan& plan, ArrayRole& role) {
  std::int64_t lo = 0, hi = 0;
  for (const auto& site : plan.sites) {
    if (site.array_id != role.array_id || site.mode == AccessMode::buffered) continue;
    if (site.subs.empty() || site.subs[0].kind != analysis::Subscript::Kind::affine ||
        site.subs[0].iter_dim != plan.choice.space_dim)
      return;
    if (site.mode != AccessMode::read && site.subs[0].offset != 0)
      return;  // a write to another row
    lo = std::min(lo, site.subs[0].offset);
    hi = std::max(hi, site.subs[0].offset);
  }
  role.banded = true;
  role.halo_below = -lo;
  role.halo_above = hi;
}

}  // namespace

void lay_out_wavefront(Plan& plan, const std::vector<std::int64_t>& rank_bounds) {
  const int P = plan.ranks;
  for (auto& role : plan.roles) {
    if (!role.written && !role.read) continue;
    ArrayBase* a = ArrayBase::find_array(role.array_id);
    if (!a) continue;
    band(plan, role);
    const double copies = role.written ? 2.0 * (P - 1) : P - 1;  // there (and back, or passed on)
    if (!role.banded) {
      plan.bytes_per_pass += static_cast<std::int64_t>(dense_bytes(*a) * copies);
      continue;
    }
    const auto rows = a->shape_vector()[0];
    a->repartition_to(Partition::range(0, band_bounds(rank_bounds, rows)));
    // Fetched: the halo rows; passed on: the rows below the next band after each block.
    const double row_bytes = rows > 0 ? dense_bytes(*a) / static_cast<double>(rows) : 0.0;
    const double rows_moved =
        static_cast<double>(role.halo_below + role.halo_above) +
        (role.written ? static_cast<double>(role.halo_below) * plan.schedule.blocks : 0.0);
    plan.bytes_per_pass += static_cast<std::int64_t>(row_bytes * rows_moved * (P - 1));
  }
}

// One written array: its whole storage for the run, and per element (and per row,
// for row writes) the tile that last logged it, so a tile logs each element once.
struct WriteTrail::Slot {
  ArrayBase* array;
  std::size_t elem_size;
  std::vector<std::int64_t> shape;
  std::int64_t row_elems;      // along the last dimension: a row access's
  std::uint64_t log_from = 0;  // the first element passed on
  std::uint64_t log_to = 0;    // the element after the last this rank may write
  std::uint64_t copy_to = 0;   // rows copied whole: the element after the last (else 0)
  std::span<std::byte> storage;
  // From log_from on: the tile (stamp) that last logged each element, and each row
  // (row accesses); 0: none yet.
  std::vector<std::uint32_t> element_tile, row_tile;
};

// What a thread has logged of its current tile.
struct WriteTrail::Log final : strata::detail::AccessClaims, strata::detail::AccessObserver {
  struct Entry {
    std::uint32_t slot, count;
    std::uint64_t offset;  // in elements, row-major over the whole array
  };
  WriteTrail* trail = nullptr;
  std::uint32_t stamp = 0;
  strata::detail::AccessObserver* inner = nullptr;
  std::vector<Entry> pending;
  std::string refusal;  // the first write to an array the plan saw only read

  void note(const ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
            AccessMode mode) {
    if (mode == AccessMode::read || mode == AccessMode::buffered) return;
    std::uint32_t s = 0;
    while (s < trail->slots_.size() && trail->slots_[s]->array != &array) ++s;
    if (s == trail->slots_.size())
      return refuse(array,
                    "is written, but the loop's plan saw it only read (a wavefront across "
                    "ranks returns only the arrays its plan writes)");
    Slot& slot = *trail->slots_[s];
    std::uint64_t flat = 0;
    for (std::size_t d = 0; d < slot.shape.size(); ++d)
      flat =
          flat * static_cast<std::uint64_t>(slot.shape[d]) + static_cast<std::uint64_t>(index[d]);
    if (flat < slot.log_from || slot.copy_to > 0)
      return;  // a row no later rank holds, or rows copied whole
    if (flat >= slot.log_to)
      return refuse(array,
                    "is written outside this rank's band of rows, where the loop's plan saw "
                    "writes only at each iteration's own row");
    if (whole_last) {
      const std::uint64_t row = flat / static_cast<std::uint64_t>(slot.row_elems);
      auto& tile = slot.row_tile[row - slot.log_from / static_cast<std::uint64_t>(slot.row_elems)];
      if (tile == stamp) return;
      tile = stamp;
      pending.push_back({s, static_cast<std::uint32_t>(slot.row_elems),
                         row * static_cast<std::uint64_t>(slot.row_elems)});
      return;
    }
    auto& tile = slot.element_tile[flat - slot.log_from];
    if (tile == stamp) return;
    tile = stamp;
    if (!pending.empty() && pending.back().slot == s &&
        pending.back().offset + pending.back().count == flat && pending.back().count < UINT32_MAX)
      ++pending.back().count;  // the next element of a run: a tile's rows write runs of them
    else
      pending.push_back({s, 1, flat});
  }
  // Keeps the first write that cannot be passed on, for the run to refuse.
  void refuse(const ArrayBase& array, const char* why) {
    if (refusal.empty())
      refusal = fmt::format("array {} {}; STRATA_CHECKED=1 names the access",
                            strata::detail::array_label(array), why);
  }
  void claim(const ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
             AccessMode mode) override {
    note(array, index, whole_last, mode);
  }
  void* on_access(ArrayBase& array, const std::source_location& where, AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real,
                  std::size_t bytes) override {
    void* alt = inner->on_access(array, where, mode, index, whole_last, real, bytes);
    if (!alt) note(array, index, whole_last, mode);  // a write the checker let through
    return alt;
  }
};

WriteTrail::Scope::Scope(WriteTrail* trail, int th, int block,
                         strata::detail::AccessObserver* observer)
    : observer_(observer) {
  if (!trail || (!trail->logging_ && !observer))
    return;  // nothing to log: the run goes at full speed
  log_ = trail->logs_[static_cast<std::size_t>(th)].get();
  log_->stamp = static_cast<std::uint32_t>(block * trail->threads_ + th + 1);
  log_->inner = observer;
  if (!observer) claims_before_ = std::exchange(strata::detail::t_claims, log_);
}

WriteTrail::Scope::~Scope() {
  if (!log_) return;
  if (!log_->inner) strata::detail::t_claims = claims_before_;
  log_->inner = nullptr;
}

strata::detail::AccessObserver* WriteTrail::Scope::observer() const {
  return log_ && log_->inner ? log_ : observer_;
}

WriteTrail::WriteTrail(const std::vector<Written>& written,
                       const std::vector<ArrayBase*>& read_only, int threads, int blocks, bool logs)
    : threads_(threads) {
  for (const auto& [a, log_from_row, copy_to_row, log_to_row] : written) {
    auto slot = std::make_unique<Slot>();
    slot->array = a;
    slot->elem_size = a->element_size();
    slot->shape = a->shape_vector();
    std::int64_t volume = 1;
    for (const auto e : slot->shape) volume *= e;
    slot->row_elems = slot->shape.empty() ? 1 : std::max<std::int64_t>(slot->shape.back(), 1);
    if (!slot->shape.empty() && slot->shape[0] > 0) {
      const auto row = static_cast<std::uint64_t>(volume / slot->shape[0]);
      slot->log_from = static_cast<std::uint64_t>(log_from_row) * row;
      slot->log_to = log_to_row >= 0
                         ? std::max(slot->log_from, static_cast<std::uint64_t>(log_to_row) * row)
                         : static_cast<std::uint64_t>(volume);
      if (copy_to_row >= 0) slot->copy_to = static_cast<std::uint64_t>(copy_to_row) * row;
    }
    logging_ = logging_ || slot->copy_to == 0;
    slot->storage = a->local_bytes();
    STRATA_CHECK(slot->storage.size() == static_cast<std::size_t>(volume) * slot->elem_size,
                 "an array of a wavefront across ranks holds the whole array for the run");
    if (logs && slot->copy_to == 0) {
      // Only the rows it may write can be logged.
      const auto logged = slot->log_to - std::min(slot->log_from, slot->log_to);
      slot->element_tile.assign(logged, 0);
      slot->row_tile.assign(logged / static_cast<std::uint64_t>(slot->row_elems) + 1, 0);
    }
    slots_.push_back(std::move(slot));
  }
  if (logs && logging_) {
    // Reads, and writes no later rank needs, go on in place; the rest come to the logs.
    views_.reserve(written.size() + read_only.size());  // the arrays hold pointers into it
    for (const auto& slot : slots_) {
      views_.push_back({});
      views_.back().claims_from =
          static_cast<std::size_t>(slot->copy_to > 0 ? SIZE_MAX : slot->log_from);
      viewed_.push_back(slot->array);
    }
    for (ArrayBase* a : read_only) {
      views_.push_back({});  // claims_from 0: a write is claimed, and refused
      viewed_.push_back(a);
    }
    for (std::size_t k = 0; k < viewed_.size(); ++k) viewed_[k]->set_claim_view(&views_[k]);
  }
  for (int th = 0; th < threads; ++th) {
    logs_.push_back(std::make_unique<Log>());
    logs_.back()->trail = this;
  }
  packed_.assign(static_cast<std::size_t>(threads),
                 std::vector<std::vector<std::byte>>(static_cast<std::size_t>(blocks)));
  received_.resize(static_cast<std::size_t>(blocks));
}

WriteTrail::~WriteTrail() {
  for (ArrayBase* a : viewed_) a->set_claim_view(nullptr);
}

std::string WriteTrail::refusal() const {
  for (const auto& log : logs_)
    if (!log->refusal.empty()) return log->refusal;
  return {};
}

void WriteTrail::pack(int th, int block) {
  Log& log = *logs_[static_cast<std::size_t>(th)];
  if (th ==
      threads_ - 1)  // the rows it alone writes, whole (an entry counts at most 2^32 - 1 elements)
    for (std::uint32_t s = 0; s < slots_.size(); ++s)
      for (auto at = slots_[s]->log_from; at < slots_[s]->copy_to;) {
        const auto n = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(slots_[s]->copy_to - at, UINT32_MAX));
        log.pending.push_back({s, n, at});
        at += n;
      }
  auto& out = packed_[static_cast<std::size_t>(th)][static_cast<std::size_t>(block)];
  std::size_t bytes = 0;
  for (const auto& e : log.pending) bytes += sizeof e + e.count * slots_[e.slot]->elem_size;
  out.resize(bytes);
  std::byte* at = out.data();
  for (const auto& e : log.pending) {
    const Slot& slot = *slots_[e.slot];
    const std::size_t n = e.count * slot.elem_size;
    std::memcpy(at, &e, sizeof e);
    std::memcpy(at + sizeof e, slot.storage.data() + e.offset * slot.elem_size, n);
    at += sizeof e + n;
  }
  log.pending.clear();
}

std::vector<std::byte> WriteTrail::message(int block) {
  const auto b = static_cast<std::size_t>(block);
  std::vector<std::byte> out = std::move(received_[b]);
  for (auto& per_thread : packed_) {
    auto& part = per_thread[b];
    out.insert(out.end(), part.begin(), part.end());
    strata::detail::free_now(part);
  }
  return out;
}

void WriteTrail::apply(int block, std::vector<std::byte> message) {
  const std::byte* at = message.data();
  const std::byte* const end = at + message.size();
  while (at < end) {
    Log::Entry e;
    STRATA_CHECK(static_cast<std::size_t>(end - at) >= sizeof e,
                 "a wavefront message ends inside an entry");
    std::memcpy(&e, at, sizeof e);
    STRATA_CHECK(e.slot < slots_.size(),
                 "a wavefront message names an array the loop does not write");
    const Slot& slot = *slots_[e.slot];
    const std::size_t n = e.count * slot.elem_size;
    STRATA_CHECK(static_cast<std::size_t>(end - at) >= sizeof e + n &&
                     (e.offset + e.count) * slot.elem_size <= slot.storage.size(),
                 "a wavefront message's entry lies outside its array");
    std::memcpy(slot.storage.data() + e.offset * slot.elem_size, at + sizeof e, n);
    at += sizeof e + n;
  }
  received_[static_cast<std::size_t>(block)] = std::move(message);
}

WavefrontArrays::WavefrontArrays(const Plan& plan, Runtime& rt) : rt_(rt) {
  const int T = rt.threads(), r = rt.rank();
  const auto space_lo = plan.space_bounds[static_cast<std::size_t>(r * T)];
  const auto space_hi = plan.space_bounds[static_cast<std::size_t>((r + 1) * T)];
  const auto next_lo =
      r + 1 < rt.size() ? space_hi : INT64_MAX;  // where the next rank's rows start
  std::vector<std::int64_t> rank_bounds;
  for (int q = 0; q <= rt.size(); ++q)
    rank_bounds.push_back(plan.space_bounds[static_cast<std::size_t>(q * T)]);
  // A journey started stays until finish() or the destructor; one that failed here
  // ends at once (the others' parts are as they were).
  try {
    for (const auto& role : plan.roles) {
      if (!role.written && !role.read) continue;
      ArrayBase* a = ArrayBase::find_array(role.array_id);
      std::int64_t log_from_row = 0, copy_to_row = -1, log_to_row = -1;
      if (role.banded) {
        // The halo rows this rank's iterations read beyond its part.
        const auto shape = a->shape_vector();
        const std::int64_t rows = shape[0];
        std::int64_t row_elems = 1;
        for (std::size_t d = 1; d < shape.size(); ++d) row_elems *= shape[d];
        const auto bounds = band_bounds(rank_bounds, rows);
        const auto part_lo = bounds[static_cast<std::size_t>(r)],
                   part_hi = bounds[static_cast<std::size_t>(r) + 1];
        std::vector<std::uint64_t> needed;
        if (space_hi > space_lo)
          for (auto row = std::max<std::int64_t>(0, space_lo - role.halo_below);
               row < std::min(rows, space_hi + role.halo_above); ++row)
            if (row < part_lo || row >= part_hi) needed.push_back(static_cast<std::uint64_t>(row));
        a->travel_begin_units(needed, static_cast<std::size_t>(row_elems), nullptr);
        log_from_row = next_lo == INT64_MAX
                           ? rows
                           : std::max<std::int64_t>(part_lo, next_lo - role.halo_below);
        log_to_row = part_hi;
        // Rows copied whole after each tile must be written by the last thread alone, and
        // read on the next rank by its first thread alone (which applies them before its
        // tile: no other thread reads them meanwhile). Else the writes are logged.
        const auto bound = [&](int w) { return plan.space_bounds[static_cast<std::size_t>(w)]; };
        if (next_lo != INT64_MAX && log_from_row >= bound((r + 1) * T - 1) &&
            (T == 1 || bound((r + 1) * T + 1) - role.halo_below >= next_lo))
          copy_to_row = part_hi;
      } else {
        a->travel_begin();
      }
      arrays_.push_back(a);
      returned_.push_back(!role.banded && role.written);
      if (role.written)
        written_.push_back({a, log_from_row, copy_to_row, log_to_row});
      else
        read_only_.push_back(a);
    }
  } catch (...) {
    for (auto* started : arrays_) started->travel_drop();
    throw;
  }
}

WavefrontArrays::~WavefrontArrays() {
  if (!finished_)
    for (auto* a : arrays_) a->travel_drop();
}

void WavefrontArrays::finish() {
  finished_ = true;
  const std::vector<int> last_rank{rt_.size() - 1};
  for (std::size_t k = 0; k < arrays_.size(); ++k)
    if (returned_[k])
      arrays_[k]->travel_end({0, arrays_[k]->shape_vector()[0]}, last_rank);
    else
      arrays_[k]->travel_drop();
}

double run_wavefront_across_ranks(
    Runtime& rt, const BlockSchedule& s, WriteTrail& trail,
    const std::function<void(int thread, int step, int block)>& run_block,
    std::exception_ptr& failure) {
  const int T = rt.threads(), r = rt.rank(), P = rt.size();
  STRATA_CHECK(s.workers == P * T && s.rounds == 1,
               "a wavefront's workers are ranks x threads, in one round");
  Comm& comm = rt.comm();
  const double timeout = comm.timeout();
  // Blocks go from the rank below in order, one sending thread to one receiving thread,
  // so messages with equal tags cannot be taken for each other (MPI keeps their order).
  auto tag_of = [&](int b) { return b <= comm.max_tag() ? b : b % comm.max_tag(); };
  // Per block: how many of this rank's threads have finished it (release: their packed
  // writes and the received message are then visible to the next thread).
  std::vector<std::atomic<int>> finished(static_cast<std::size_t>(s.blocks));
  for (auto& f : finished) f.store(0, std::memory_order_relaxed);
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(s.blocks), 0);
  std::vector<std::vector<std::byte>> sent(static_cast<std::size_t>(s.blocks));
  std::vector<double> waited(static_cast<std::size_t>(T), 0.0);
  const bool passes_on = r + 1 < P;
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(T));
  std::atomic<bool> abandoned{false};
  rt.pool().run([&](int t) {
    strata::detail::WorkerScope worker(t);
    const int w = r * T + t;
    const auto& order = s.order[static_cast<std::size_t>(w)];
    for (int step = 0; step < static_cast<int>(order.size()); ++step) {
      const int b = order[static_cast<std::size_t>(step)];
      STRATA_CHECK(s.use_at(w, step) == w,
                   "a wavefront passes each block from worker 0 to the last, in order");
      const auto wait_start = std::chrono::steady_clock::now();
      if (t == 0 && r > 0) {
        const std::string what = fmt::format(
            "the writes of time block {} from rank {} (a wavefront across ranks)", b, r - 1);
        std::uint64_t size = 0;
        comm.recv(std::as_writable_bytes(std::span(&size, 1)), r - 1, tag_of(b), what);
        std::vector<std::byte> message(static_cast<std::size_t>(size));
        comm.recv(message, r - 1, tag_of(b), what);
        trail.apply(b, std::move(message));
      } else if (t > 0) {
        auto& done = finished[static_cast<std::size_t>(b)];
        for (long spins = 0; done.load(std::memory_order_acquire) < t; ++spins) {
          if (spins < 1000) continue;
          std::this_thread::yield();
          if (strata::detail::seconds_since(wait_start) > timeout)
            throw TimeoutError(fmt::format("time block {} from worker {} (thread wait)", b, w - 1),
                               r, timeout);
        }
      }
      waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(wait_start);
      if (!abandoned.load(std::memory_order_relaxed)) try {
          run_block(t, step, b);
        } catch (abi::__forced_unwind&) {  // a cancelled thread must go on unwinding
          throw;
        } catch (...) {
          failed[static_cast<std::size_t>(t)] = std::current_exception();
          abandoned.store(true, std::memory_order_relaxed);
        }
      if (passes_on) trail.pack(t, b);
      finished[static_cast<std::size_t>(b)].store(t + 1, std::memory_order_release);
      if (passes_on && t == T - 1) {
        auto& out = sent[static_cast<std::size_t>(b)];
        out = trail.message(b);
        sizes[static_cast<std::size_t>(b)] = out.size();
        comm.isend(std::as_bytes(std::span(&sizes[static_cast<std::size_t>(b)], 1)), r + 1,
                   tag_of(b));
        comm.isend(out, r + 1, tag_of(b));
      }
      // MPI moves a message on only while the sender calls into it: once a block, the
      // sends started so far get their turn (without it, the next rank received nothing
      // until this one had run all its blocks).
      if (passes_on && t == T - 1) comm.finished_sends();
    }
    if (passes_on && t == T - 1) comm.wait_sends();
  });
  for (const auto& f : failed)
    if (f && !failure) failure = f;
  double total = 0;
  for (double v : waited) total += v;
  return total;
}

}  // namespace strata::loop::detail
