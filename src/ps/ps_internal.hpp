// The parameter server's internal header: what its files share behind the waist
// (strata/detail/ps_element_ops.hpp). Nothing here is seen by user code. One job per file:
//   geometry.cpp      the array on bytes: keys, owners, local offsets
//   deliver.cpp       the one path that carries deltas to their owners (Buffer::flush
//                     and a relaxed table's clocks) and applies them there
//   buffer_engine.cpp a Buffer's owner side as detail::BufferBase: flush, checkpoints,
//                     single-process replay
//   table.cpp         a relaxed table's run: begin, end, waiting, its small faces
//   table_layout.cpp  the read set laid out as cache blocks, blocks and updates
//   table_clocks.cpp  clocks: the staleness wait, a one-rank table's own applies
//   table_owner.cpp   the message protocol and the owner side (the Postman's thread)
//   table_reader.cpp  reads: the cache, the dynamic path, logged reads
//   table_outbox.cpp  managed communication: the pump, as the table runs it
//   table_replica.cpp a Hybrid table on several ranks as a whole replica per rank
//   managed_outbox.cpp the outbox: bucket, timing, ranking (managed_outbox.hpp)
//   postman.cpp, consistency.cpp, buffer_registry.cpp: the communication thread,
//                     consistency checks, Buffers by array id
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ps/managed_outbox.hpp"
#include "ps/timing_log.hpp"
#include "strata/detail/cache_view.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/buffer_base.hpp"
#include "strata/detail/ps_element_ops.hpp"
#include "ps/owner_history.hpp"
#include "ps/postman.hpp"
#include "loop/relaxed_base.hpp"
#include "strata/runtime.hpp"

namespace strata::ps {

// ---- the array on bytes (geometry.cpp) --------------------------------------

inline constexpr std::size_t kMaxDims = 8;

/// A dense array's shape, partition and this rank's storage, as the engine needs
/// them per element: keys are row-major element numbers. Taken afresh where the
/// array may have moved (a flush, the start of a run).
struct Geometry {
  std::vector<std::int64_t> shape;
  const std::vector<IndexSet>* box = nullptr;  // this rank's box (the typed front's)
  const Distribution* dist = nullptr;
  std::size_t dims = 0;
  // Elements per row that share an owner and sit together in its storage: the last
  // extent for a relaxed table (rows are never split), else 1. The per-element paths
  // below look a row's owner and offset up once (RowMemo).
  std::int64_t row_len = 1;

  static Geometry of(detail::ArrayBase& array, const ElementOps& ops);
  void index_of(std::int64_t key, std::int64_t* out) const;
  int owner_of(std::int64_t key) const;
  /// The position of `index` in this rank's dense storage, or -1.
  std::int64_t local_offset(const std::int64_t* index) const;
  std::int64_t local_offset_of(std::int64_t key) const;
  std::int64_t volume() const;
};

/// A row's owner and local offset, looked up once for the row's run of keys.
struct RowMemo {
  std::int64_t row = -1, owner = 0, offset = 0;
  int owner_of(const Geometry& g, std::int64_t key) {
    if (g.row_len == 1) return g.owner_of(key);
    if (key / g.row_len != row) look_up(g, key);
    return static_cast<int>(owner);
  }
  // -1 when this rank does not hold the key.
  std::int64_t local_offset_of(const Geometry& g, std::int64_t key) {
    if (g.row_len == 1) return g.local_offset_of(key);
    if (key / g.row_len != row) look_up(g, key);
    return offset < 0 ? -1 : offset + key % g.row_len;
  }
  void look_up(const Geometry& g, std::int64_t key) {
    row = key / g.row_len;
    owner = g.owner_of(row * g.row_len);
    offset = g.local_offset_of(row * g.row_len);
  }
};

// ---- deltas to their owners (deliver.cpp) -----------------------------------

/// A run of deltas located at the owner: keys, their local offsets, and the deltas
/// (`stride` bytes apart).
struct OwnedRun {
  const std::int64_t* keys;
  const std::int64_t* offsets;
  const std::byte* deltas;
  std::size_t stride;
  std::size_t n;
};

/// Drains the sets [from, from + count) of `ops` into one message per rank, each
/// `prefix` and then the (key, delta) records of the elements that rank owns.
std::vector<Bytes> pack_for_owners(ElementOps& ops, const Geometry& g, int ranks, std::span<const std::byte> prefix,
                                   std::size_t from = 0, std::size_t count = 0);
/// pack_for_owners as row runs (a relaxed table whose units are rows: row_len > 1),
/// draining every set; read back with for_row_runs.
std::vector<Bytes> pack_rows_for_owners(ElementOps& ops, const Geometry& g, int ranks,
                                        std::span<const std::byte> prefix);
void for_row_runs(const ElementOps& ops, const Geometry& g, std::span<const std::byte> runs,
                  const std::function<void(const OwnedRun&)>& f);
/// f(run) for the records of `records` in runs, each located on this rank.
void for_record_runs(const ElementOps& ops, const Geometry& g, std::span<const std::byte> records,
                     const std::function<void(const OwnedRun&)>& f);
/// f(run) for the drained sets [from, from + count), part `part` of `parts`, in runs.
void for_drained_runs(ElementOps& ops, const Geometry& g, std::size_t from, std::size_t count, int part, int parts,
                      const std::function<void(const OwnedRun&)>& f);

// ---- wire format of a relaxed table's messages ------------------------------

enum Kind : std::uint32_t { kDeltas = 1, kValues = 2, kRead = 3, kReadReply = 4, kEarly = 5 };
struct Header {
  std::uint32_t kind;
  std::int32_t thread;
  std::int64_t clock;
  std::int64_t unit;
};

class Table;

// ---- a Buffer's engine (buffer_engine.cpp) ----------------------------------

class BufferEngine final : public detail::BufferBase {
 public:
  BufferEngine(detail::ArrayBase& target, Runtime& rt, ElementOps& ops, const std::optional<Consistency>& relaxed);
  ~BufferEngine() override;

  void flush() override;
  detail::RelaxedBase* relaxed() override;
  bool has_owner_state() const override { return ops_.has_state(); }
  detail::CheckpointSnapshot owner_state_snapshot(Bytes storage) override;
  std::function<void()> stage_owner_state(const std::filesystem::path& dir, std::int64_t rounds) override;
  std::int64_t rounds() const override { return rounds_; }
  void replay_begin(int workers) override;
  std::int64_t replay_reserve(std::int64_t n) override;
  void replay_apply(int ranks, std::int64_t round) override;
  void replay_apply_logged(std::span<const std::span<const std::byte>> applies, std::int64_t first_round,
                           const std::string& call) override;
  void replay_end() override;

  /// Reserves `n` apply rounds (one per flush or per clock); the first's number.
  std::int64_t reserve_rounds(std::int64_t n) {
    const std::int64_t first = rounds_;
    rounds_ += n;
    return first;
  }
  RelaxedStats stats() const;

 private:
  detail::ArrayBase& target_;
  Runtime& rt_;
  ElementOps& ops_;
  std::int64_t rounds_ = 0;
  std::unique_ptr<Table> table_;  // relaxed arrays only
};

// ---- a relaxed array's table (table*.cpp) -----------------------------------
//
// The owner side (master values, deltas applied per clock in rank order, blocks
// sent to readers) and the reader side (the static cache, clocks, the staleness
// wait, the dynamic path). Message handlers run on the Postman's thread; everything
// else on loop threads. The two meet under one mutex.
//
// With managed communication loop threads also hand their deltas to the outbox
// between clocks, its pump sends some early (kEarly), and owners fold those in as
// they arrive. An execution record of such a run (or a Hybrid one) logs what the
// reads saw and what the owner applied (timing_log.hpp).
class Table final : public detail::RelaxedBase {
 public:
  Table(detail::ArrayBase& target, Runtime& rt, ElementOps& ops, BufferEngine& engine, Consistency consistency);
  ~Table() override;

  std::uint64_t array_id() const override { return target_.array_id(); }
  const Consistency& consistency() const override { return consistency_; }
  std::int64_t unit_count() const override { return units_; }
  std::int64_t unit_of(std::span<const std::int64_t> index) const override;
  bool replicates_wide_read_sets() const override;  // table_replica.cpp
  const RelaxedStats& stats() const { return stats_; }
  bool managed() const override { return managed_; }
  // A loop thread after each iteration: hands its deltas over only when the pump asked.
  void offer(int thread) override {
    if (outbox_->wanted(thread)) outbox_->take_from(thread);
  }
  void begin_run(std::span<const std::uint64_t> read_units, std::int64_t clocks) override;
  void tick(std::int64_t clock) override;
  std::span<const std::int64_t> cache_versions() const override { return versions_; }
  void follow_versions(std::vector<std::int64_t> versions) override { follow_ = std::move(versions); }
  void end_run() override;
  bool splits_tick() const override { return rt_.size() == 1 && !managed_; }
  void prepare_tick(std::int64_t clock, int parts) override;
  void tick_part(std::int64_t clock, int part, int parts) override;
  void share_cache(int counter) override;
  void count_cache_reads(int thread, std::int64_t reads) override {
    counters_[static_cast<std::size_t>(thread)].cache += reads;
  }
  void* read(std::span<const std::int64_t> index, bool whole_last, detail::AccessMode mode, int thread) override;
  void log_timing(bool on) override { logging_ = on; }
  Bytes take_timing_log() override { return log_.take(target_.array_id(), row_bytes()); }

 private:
  // Per owner: the updates that arrived since the cache last took them, oldest
  // first, each with its clock, and the clock of the newest.
  struct Staged {
    std::int64_t clock = -1;
    std::vector<std::pair<std::int64_t, Bytes>> updates;
  };
  // Reads one loop thread served, from the cache and through the dynamic path (a
  // cache line each: every thread counts its own).
  struct alignas(64) Counters {
    std::int64_t cache = 0, dynamic = 0;
  };
  struct Waiter {
    bool ready = false;
    Bytes values;
  };

  std::string label() const { return detail::array_label(target_); }
  std::byte* values() const { return target_.local_bytes().data(); }
  // The bytes of one unit.
  std::size_t row_bytes() const { return static_cast<std::size_t>(unit_len_) * elem_; }
  void first_of(std::int64_t unit, std::int64_t* index) const { geo_.index_of(unit * unit_len_, index); }
  std::int64_t unit_offset(std::int64_t unit) const;  // local offset of the unit's first element
  // Where unit `u` sits in the cache block, or nullptr when not cached.
  std::byte* cached_unit(std::int64_t u) const;
  // Where element `key` sits in the cache block, or nullptr when not cached.
  std::byte* cached_element(std::int64_t key) const;
  void send(int dest, const Bytes& message);
  void server_send(int dest, const Bytes& message);
  // Waits on the table's condition variable, checking the Postman and the job's
  // timeout: a dead or stuck rank becomes a TimeoutError naming what was awaited.
  void wait_for(std::unique_lock<std::mutex>& lock, const std::string& what, const std::function<bool()>& ready);

  // table_layout.cpp
  void lay_out(std::span<const std::uint64_t> read_units);
  bool owner_values_are_laid_out_like_the_array() const;
  bool holds_everything_for_free() const;
  Bytes snapshot_for(int q) const;
  void fill_own_block();
  void store_block(int o, const Bytes& message);
  std::size_t slot_at(int o, std::size_t pos) const {
    return whole_ ? static_cast<std::size_t>(reads_from_[static_cast<std::size_t>(o)][pos])
                  : static_cast<std::size_t>(base_[static_cast<std::size_t>(o)]) + pos;
  }
  Bytes update_for(int q, std::int64_t clock) const;
  void store_update(int o, const Bytes& pairs);

  // table_clocks.cpp
  void flush_clock(std::int64_t clock);
  void refold_own(std::int64_t take);
  void apply_own(std::int64_t clock, int part, int parts, std::vector<std::int64_t>& changed);
  void finish_own_clock(std::int64_t clock);
  void next_reads_clock(std::int64_t clock, const char* reader);

  // table_owner.cpp
  void on_message(int from, std::span<const std::byte> body);
  bool must_wait(const Header& ask) const { return next_apply_ <= ask.clock; }  // under mu_
  void answer_read(int reader, const Header& ask);
  void apply_run(const OwnedRun& run, std::int64_t clock, std::vector<std::int64_t>& changed);
  void apply_logged(const OwnedRun& run, std::int64_t clock);
  void apply_ready();

  // table_reader.cpp
  std::byte* logged(int thread, std::int64_t u, std::byte* unit);
  std::byte* fetch(std::int64_t u, int thread);
  void learn_missed_units();

  // table_outbox.cpp
  void pump();

  // table_replica.cpp
  bool replicates_per_thread() const;
  void replica_allocate();
  void replica_fill();
  void replica_gather_changes();
  void replica_apply();
  void replica_merge_part(int part, int parts);
  void replica_finish_clock(std::int64_t clock);
  void replica_tick(std::int64_t clock);
  void replica_end();

  detail::ArrayBase& target_;
  Runtime& rt_;
  ElementOps& ops_;
  BufferEngine& engine_;
  Consistency consistency_;
  std::size_t elem_;
  Geometry geo_;  // refreshed by begin_run
  std::int64_t unit_len_ = 1, units_ = 0;
  Postman* postman_ = nullptr;
  bool managed_ = false;
  std::unique_ptr<ManagedOutbox> outbox_;  // managed communication only

  // Layout: set by lay_out, read-only during a run.
  std::vector<std::uint64_t> laid_out_bits_;
  std::uint64_t laid_out_version_ = ~std::uint64_t{0};
  bool laid_out_logging_ = false;
  std::vector<std::vector<std::int64_t>> reads_from_;    // per owner: the units this rank caches
  std::vector<std::vector<std::int64_t>> serves_;        // per reader: local offsets of the units it caches
  std::vector<std::vector<std::int32_t>> position_for_;  // per reader, per local unit: its place in serves_, or -1
  // The Postman's thread, during a clock's apply: local units that changed.
  std::vector<std::uint8_t> is_changed_;
  std::vector<std::int64_t> changed_;
  // A one-rank table's clock: units each part changed, and the clock whose work the
  // rank's threads are sharing (-1: none).
  std::vector<std::vector<std::int64_t>> changed_parts_;
  std::int64_t split_clock_ = -1;
  bool whole_ = false;                 // block_ is laid out like the array
  std::vector<std::int32_t> slot_of_;  // compact layout: per unit, its slot in block_, or -1
  std::vector<std::int32_t> base_;     // per owner: its first slot
  Bytes block_;                        // the cache (empty when direct_)
  // One rank, neither managed nor Hybrid, array-shaped layout: the cache is the rank's
  // own values. The rank's threads apply each clock while stopped (apply_own), so no
  // read sees a value change, and a copy would cost a write per change and the memory.
  bool direct_ = false;
  // Hybrid or read-my-writes at staleness 0 with whole replicas (table_replica.cpp):
  // several ranks each reading most of the array, or a replica per worker thread.
  // block_ caches every unit and is the rank's (or thread 0's) replica; adds fold into
  // a replica only, and a clock merges or exchanges what each replica changed.
  bool replica_ = false;
  Bytes snapshot_;  // the replica's values as of the last clock, the same on every rank
  // With a replica per thread (Consistency::replica_per_thread) each worker thread of
  // the rank has one: replicas_[t] is thread t's (replicas_[0] is block_, the others in
  // thread_blocks_). Otherwise replicas_ is {block_}.
  std::vector<Bytes> thread_blocks_;
  std::vector<void*> replicas_;
  // A replica clock's exchange, kept between clocks so that clocks allocate nothing.
  struct ReplicaExchange {
    std::vector<Bytes> parts;            // per rank: its changes (count, differences, units)
    std::vector<std::int64_t> changed;   // units some replica changed
    std::vector<std::int64_t> mine;      // units this rank's replicas changed
    std::vector<std::pair<int, std::int64_t>> by_thread;  // (thread, unit): each replica's changes
    std::vector<std::uint8_t> touched;   // per unit: in `changed`
    std::vector<std::int32_t> slot;      // per unit: its row in this rank's part, or -1
    std::vector<std::vector<std::uint8_t>> written;  // per replica, per unit: folded into since the last clock
    std::vector<std::uint8_t*> written_ptrs;         // written[t].data(), for CacheView::written_by
    // Per part of a merge (replica_merge_part; the gather is one part), a row for the
    // sum of the replicas' differences and one for the next difference.
    std::vector<Bytes> part_rows;
  } exchange_;
  detail::CacheView view_;  // block_ as reads find units in it (set by lay_out)

  // Reader side, loop threads (tick runs while the rank's threads are stopped).
  std::int64_t version_ = -1;           // the clock of the array the cache holds (-1: none applied)
  std::vector<std::int64_t> versions_;  // per clock of the run: version_ during it
  std::vector<std::int64_t> follow_;    // a replay: the versions_ to take (empty: as fresh as allowed)
  std::vector<Counters> counters_;
  std::vector<std::unordered_map<std::int64_t, Bytes>> fetched_;  // per thread, this clock
  std::vector<std::vector<std::int64_t>> missed_;  // per thread: units read dynamically in this call
  std::vector<std::uint64_t> learned_bits_;        // units read dynamically in earlier calls
  RelaxedStats stats_;
  bool logging_ = false;  // an execution record logs this run's timing
  TimingLog log_;         // what the run's reads saw and its owner applied
  bool polled_ = false;   // the Postman polls for this run's messages
  std::int64_t round_ = 0;  // the apply round of clock 0 of this run
  // SSP across ranks: the owner's last clocks, to answer reads as of a reader's clock.
  // The Postman's thread only (begin_run clears it under mu_). Rows are kept as bytes.
  bool keeps_history_ = false;
  OwnerHistory<std::byte> history_;
  // Read-my-writes under SSP across ranks: the cache takes an older clock of the
  // owners' values than the rank has written, so the rank keeps what it sent of each
  // clock the cache does not hold yet, and folds it back into the units an update
  // overwrote (`refreshed_`). Loop threads only (tick).
  bool refolds_ = false;
  std::deque<std::pair<std::int64_t, std::vector<Bytes>>> own_sent_;
  std::vector<std::uint8_t> refreshed_;

  // Shared with the Postman's thread, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t clocks_ = 1, next_apply_ = 0;
  std::map<std::int64_t, std::vector<Bytes>> inbound_;  // per clock, per rank: deltas
  std::map<std::int64_t, int> arrived_;
  std::vector<Staged> staged_;                          // per owner: updates not yet in the cache
  std::vector<std::int64_t> received_;                  // per owner: blocks received this run
  std::vector<Waiter> waiters_;                         // per thread: the dynamic read in flight
  std::vector<std::pair<int, Header>> deferred_reads_;  // (reader, request) waiting for a clock's apply
  std::int64_t server_bytes_ = 0, server_messages_ = 0;
};

}  // namespace strata::ps
