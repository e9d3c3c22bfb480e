// Re-validating a conflict-groups plan on every run.
//
// A groups plan puts iterations that touch a common element (one of them writing it)
// on one thread, from the element accesses recorded when the loop was planned. When a
// body's subscripts depend on values (a negative drawn from the epoch, a driver
// variable, another array), a later call may touch other elements, and the recorded
// groups would let two threads race on one. So every run of such a plan claims each
// element it touches in an OwnershipTable before touching it:
//   * an element first read by one worker, then read by others, becomes shared-read;
//   * a write claims the element for its worker if no other worker has touched it;
//   * any other combination (a write to an element another worker touched, a read of
//     an element another worker wrote) is a conflict, refused before the access runs.
// Whatever the interleaving, two accesses of different workers to one element with
// one of them a write always meet at the element's claim, so a run that finishes
// without a refusal had no cross-worker conflict: it equals the serial run of each
// worker's iterations one worker after the other (the plan's equivalent order). A
// refused run is undone and the loop planned again (loop_call.cpp).
//
// Split groups (loop/split_groups.hpp) add a fourth case: a unit of an array the
// iterations of a group too large for one thread write is *lockable*. It is never
// claimed for a whole run: an iteration locks it (before it runs, or when it reaches
// it: SplitLocks) and unlocks it when it ends, and a claim on it by a worker that does
// not hold its lock fails. A lock taken before the
// iteration runs is marked untouched until the iteration's first access to the unit,
// so the iteration knows which of its recorded locks it needed.
//
// Undoing a refused run: the first write claim of a unit saves its old bytes in the
// claiming worker's WriteLog (loop/write_log.hpp) where the array's units are rows of
// 64 bytes or more and none is lockable; undo_logged_writes() puts them back. Other
// arrays are copied whole before the run (RunSnapshot), as a log of small units
// would cost more than the copy.
//
// Every array the loop writes in place is tracked (by row where some access takes
// whole rows, as the recorded groups key it); a write to any other array comes from
// a site the plan never saw and is refused too. Reads of arrays the loop does not
// write conflict with nothing; a spread plan's table tracks those arrays all the same
// (read-only, by row), only so that a rank's access to a row it does not hold is
// refused. Fitted subscripts (p_k + c, constants) are taken to stay what they were
// fitted to, as in every plan; checked mode verifies them.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "loop/write_log.hpp"
#include "strata/detail/array_base.hpp"

namespace strata::loop {

struct Plan;

/// Whether conflicts on `array_id` are found row by row: some access of the loop takes
/// a whole row of it, so a row and an element of it must meet as one unit. The
/// recorded groups (build_plan) and the OwnershipTable key accesses alike by it.
bool keyed_by_row(const Plan& plan, std::uint64_t array_id);
/// The ids of the arrays of `plan` keyed by row, in role order.
std::vector<std::uint64_t> row_keyed_arrays(const Plan& plan);

class OwnershipTable {
 public:
  /// Tracks what `plan` needs tracked (see above), and where `track_reads` the arrays
  /// it only reads in place too, as read-only; empty() when nothing.
  explicit OwnershipTable(const Plan& plan, bool track_reads = false);
  bool empty() const { return arrays_.empty(); }
  /// Forgets every claim: a run starts with every element untouched.
  void reset();
  /// Claims what an access at `index` (a whole row when `whole_last`) of `array`
  /// touches for `worker` (0-based, below 16382: tag 0x3fff is kShared). False when
  /// another worker's claim conflicts with it, when it writes an array the table does
  /// not track or tracks read-only, or when it reaches a unit absent on this rank.
  /// Inline: every access of a re-validating run comes here.
  bool claim(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last, bool write,
             int worker) {
    const Tracked* t = find(array);
    if (!t) [[unlikely]]
      return !write;  // the plan knows of no write to this array: a site it never saw
    if (write && t->read_only) [[unlikely]]
      return false;
    const std::size_t dims = t->shape.size();
    const bool one_unit = t->by_row || !whole_last;
    std::size_t unit;
    // Out-of-shape subscripts are the accessor's to report; they claim nothing.
    if (!linear(*t, index, one_unit && !t->by_row ? dims : dims - 1, unit)) [[unlikely]]
      return true;
    if (!marks_.empty())  // mark_only(): nothing to refuse but units the rank does not hold
      return mark(*t, unit, one_unit, write);
    if (!one_unit) [[unlikely]]
      return claim_row_elements(*t, unit, write, worker);
    return claim_unit(*t, t->first + unit * t->stride, write, worker);
  }
  /// Why a claim of `array` at `index` that claim() refused was refused, for messages:
  /// "" (another worker's claim conflicts), or what the plan forbids (a write to an
  /// array it never saw written; a unit this rank does not hold for the call).
  std::string refusal(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
                      bool write) const;
  /// For explain: "E (by row, 40943 rows), R (by element, 1300 elements)".
  std::string describe() const;

  static constexpr std::uint64_t kNoUnit = ~std::uint64_t{0};
  /// The unit an access claims: kNoUnit when the table does not track `array`, a
  /// subscript is out of shape, or the access spans several units (a whole row of an
  /// array tracked by element).
  /// (Units are numbered by their state's place, gaps included: see states_.)
  std::uint64_t unit_of(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                        bool whole_last) const;
  std::size_t units() const { return units_; }
  /// Whether `other` numbers the units of the same arrays alike.
  bool same_units(const OwnershipTable& other) const;

  // ---- groups spread over ranks (loop/spread.hpp) --------------------------------
  /// The tracked arrays, in table order, and the elements of one of their units (a
  /// row's for an array tracked by row, else 1).
  std::size_t tracked_arrays() const { return arrays_.size(); }
  std::uint64_t array_id(std::size_t k) const { return arrays_[k].array->array_id(); }
  bool by_row(std::size_t k) const { return arrays_[k].by_row; }
  /// An array the loop only reads (tracked where the constructor was asked to).
  bool read_only(std::size_t k) const { return arrays_[k].read_only; }
  std::size_t unit_elems(std::size_t k) const {
    return arrays_[k].by_row ? static_cast<std::size_t>(arrays_[k].shape.back()) : 1;
  }
  /// Calls f(k, unit, place) for every unit of every tracked array: k its array in
  /// table order, `unit` its row-major number in the array (rows of an array tracked
  /// by row, else elements), `place` its number as unit_of gives it; ascending units.
  template <class F>
  void for_each_unit(F&& f) const {
    for (std::size_t k = 0; k < arrays_.size(); ++k) for_each_unit_of(k, [&](std::uint64_t u, std::size_t p) { f(k, u, p); });
  }
  /// The same for tracked array k only: f(unit, place).
  template <class F>
  void for_each_unit_of(std::size_t k, F&& f) const {
    for (std::size_t u = 0; u < arrays_[k].count; ++u) f(static_cast<std::uint64_t>(u), arrays_[k].first + u * arrays_[k].stride);
  }
  /// The unit at `place` is not on this rank for the call (a spread plan's rank holds
  /// its part and the units its groups touch): every run refuses an access to it
  /// before the access reads (ClaimView::absent, or a claim word no worker holds).
  void make_absent(std::size_t place) {
    absent_.resize(units_, kHeld);
    absent_[place] = kAbsentUnit;
  }
  /// The unit at `place` is fetched for each call from another rank, which keeps it:
  /// its writes go back to that rank after a run that holds, and need no undoing here.
  void make_borrowed(std::size_t place) {
    absent_.resize(units_, kHeld);
    absent_[place] = kBorrowedUnit;
  }
  std::size_t place_of(std::size_t k, std::uint64_t unit) const {
    return arrays_[k].first + static_cast<std::size_t>(unit) * arrays_[k].stride;
  }
  /// What this rank's run did to the unit at `place` (unit_of's numbering):
  /// ClaimView's touched and written bits. Lockable and absent units read as
  /// untouched (a plan with split groups runs on one rank; absent units are refused).
  std::uint8_t seen_at(std::size_t place) const {
    return lockable_[place] || (!absent_.empty() && absent_[place] == kAbsentUnit) ? 0 : seen(place);
  }
  /// One worker claims everything on this rank (a spread plan with one thread a
  /// rank): nothing can conflict within the rank, so claims only mark what the run
  /// touched and wrote, a byte per unit. The bytes stay in cache where the 64-bit
  /// states of a large array would not (a claim then cost a miss of its own).
  void mark_only();
  bool marks_only() const { return !marks_.empty(); }
  /// While attached, the tracked arrays' accessors take the common claims in place
  /// (strata::detail::ClaimView: a mark, or a check that the worker holds the unit),
  /// which spares a call per access. Their storage must hold the whole array (one
  /// rank, or a spread plan's copies, which address the whole array).
  void attach_views();
  void detach_views();

  // ---- undoing a refused run (see above) ------------------------------------------
  /// Whether the writes of `array` are undone from the logs (else the caller copies it).
  bool logs_writes(const strata::detail::ArrayBase& array) const {
    const Tracked* t = find(array);
    return t && t->logs;
  }
  /// Puts back the saved bytes of every unit the run wrote; the storage must be as the
  /// run left it (a spread plan's copies still addressing the whole array).
  void undo_logged_writes();
  /// Forgets the logs and frees them (after the run, refused or not).
  void drop_logs();
  /// The bytes the logs hold now (tests).
  std::size_t logged_bytes() const;

  // ---- locks of split groups -----------------------------------------------------
  /// Makes every unit of the arrays holding `units` lockable (see above) for every
  /// later run.
  void make_arrays_lockable(std::span<const std::uint32_t> units);
  std::size_t lockable_units() const { return lockable_count_; }
  bool lockable(std::size_t unit) const { return lockable_[unit] != 0; }
  /// Locks a lockable unit for `worker` unless another worker holds it; `touched`
  /// when the access follows at once (else it stays untouched until it does).
  bool try_lock(std::size_t unit, int worker, bool touched) {
    // Test before the compare-and-swap: a waiter that only reads leaves the holder's
    // line in its cache.
    std::uint64_t now = states_[unit].load(std::memory_order_relaxed);
    if (state_of(now) != 0) return false;
    const std::uint64_t held = (now & kClockMask) | kWritten | (touched ? 0 : kUntouched) | tag_of(worker);
    return states_[unit].compare_exchange_strong(now, held, std::memory_order_acquire, std::memory_order_relaxed);
  }
  /// Whether `worker` holds a lockable unit and has touched it.
  bool touched_by(std::size_t unit, int worker) const {
    return state_of(states_[unit].load(std::memory_order_relaxed)) == (kWritten | tag_of(worker));
  }
  /// The worker holding a lockable unit, -1 when none does.
  int holder(std::size_t unit) const {
    const std::uint64_t now = state_of(states_[unit].load(std::memory_order_relaxed));
    return now == 0 ? -1 : static_cast<int>(now & kShared) - 1;
  }
  /// A lockable unit's clock (split_groups.hpp), read by the worker holding it: the
  /// ticket of the last iteration that touched it in this run (0: none).
  std::int64_t clock(std::size_t unit) const {
    return static_cast<std::int64_t>(states_[unit].load(std::memory_order_relaxed) >> kClockShift);
  }
  /// Unlocks a unit its holder has touched, setting its clock to `ticket`.
  void unlock_touched(std::size_t unit, std::int64_t ticket) {
    states_[unit].store(static_cast<std::uint64_t>(ticket) << kClockShift, std::memory_order_release);
  }
  /// Unlocks a unit, from the worker holding it; its clock stays.
  void unlock(std::size_t unit) {
    states_[unit].store(states_[unit].load(std::memory_order_relaxed) & kClockMask, std::memory_order_release);
  }

 private:
  struct Tracked {
    const strata::detail::ArrayBase* array;
    std::string name;
    std::vector<std::int64_t> shape;
    bool by_row;             ///< one unit per row (every access takes whole rows)
    bool read_only = false;  ///< the loop only reads it: any write is refused
    bool logs = false;       ///< a unit's first write saves its old bytes (see above)
    std::size_t unit_bytes = 0;
    std::size_t first = 0;   ///< its first unit in states_
    std::size_t count = 0;
    std::size_t stride = 1;  ///< states_ entries from one unit to the next
  };
  // A unit's word: its clock (lockable units) above its state. The state: 0
  // untouched; w + 1 read by worker w only; kShared read by several workers;
  // kWritten | (w + 1) written (and perhaps read) by worker w only, or a lockable unit
  // locked by w; kWritten | kUntouched | (w + 1) locked by w, not yet touched. Only a
  // lock's holder writes its word. The clock shares the word so that a lock brings it
  // along (one cache line, not two).
  static constexpr std::uint64_t kShared = strata::detail::ClaimView::shared;
  static constexpr std::uint64_t kUntouched = 0x4000;
  static constexpr std::uint64_t kWritten = strata::detail::ClaimView::written_by;
  /// An absent unit's state: "written by" the shared tag, which is no worker's, so no
  /// claim holds it and every claim of it fails.
  static constexpr std::uint64_t kAbsent = kWritten | kShared;
  static constexpr int kClockShift = 16;
  static constexpr std::uint64_t kClockMask = ~std::uint64_t{0xffff};
  static std::uint64_t state_of(std::uint64_t word) { return word & 0xffff; }
  static std::uint64_t tag_of(int worker) { return static_cast<std::uint64_t>(worker + 1); }

  bool mark(const Tracked& t, std::size_t unit, bool one_unit, bool write) {
    using View = strata::detail::ClaimView;
    const std::uint8_t m = View::mark_of(write);
    // A unit's first write saves it (one worker a rank: worker 0's log).
    const auto set = [&](std::size_t place) {
      if (write && !(marks_[place] & View::written)) log_write(t, place, 0);
      marks_[place] |= m;
    };
    if (one_unit) [[likely]] {
      const std::size_t place = t.first + unit * t.stride;
      if (marks_[place] & View::absent) [[unlikely]]
        return false;
      set(place);
      return true;
    }
    const auto width = static_cast<std::size_t>(t.shape.back());  // a whole row of an array tracked by element
    for (std::size_t k = 0; k < width; ++k)
      if (marks_[t.first + (unit * width + k) * t.stride] & View::absent) return false;
    for (std::size_t k = 0; k < width; ++k) set(t.first + (unit * width + k) * t.stride);
    return true;
  }
  /// Saves the unit at `place` of t in `worker`'s log before its first write, where t
  /// logs its writes and the unit is not borrowed (out of line: once a unit a run).
  void log_write(const Tracked& t, std::size_t place, int worker);
  /// What this rank's run did to the unit at `at` (ClaimView's touched / written bits),
  /// from its marks or its claim word.
  std::uint8_t seen(std::size_t at) const {
    if (!marks_.empty()) return marks_[at];
    const std::uint64_t state = state_of(states_[at].load(std::memory_order_relaxed));
    return state == 0 ? 0 : strata::detail::ClaimView::mark_of((state & kWritten) != 0);
  }
  bool claim_unit(const Tracked& t, std::size_t unit, bool write, int worker) {
    const std::uint64_t tag = tag_of(worker);
    // Already held as this access needs it (the common case): no write to shared memory.
    if (strata::detail::ClaimView::holds(states_[unit].load(std::memory_order_relaxed), tag, write)) [[likely]]
      return true;
    if (!take_unit(unit, write, tag)) return false;
    // A write claim it did not hold before (only this worker sets its own tag): the
    // unit's first write in this run. Lockable units never log (see above).
    if (write && t.logs) log_write(t, unit, worker);
    return true;
  }
  /// The state change of a claim, by compare-and-swap; false when it conflicts.
  bool take_unit(std::size_t unit, bool write, std::uint64_t tag);
  /// A whole row of an array tracked by element: every element of the row.
  bool claim_row_elements(const Tracked& t, std::size_t row, bool write, int worker);
  /// The row-major place of `index`'s first `prefix` subscripts in t's shape; false
  /// when one of them is out of shape.
  static bool linear(const Tracked& t, std::span<const std::int64_t> index, std::size_t prefix, std::size_t& out) {
    out = 0;
    for (std::size_t d = 0; d < prefix; ++d) {
      if (static_cast<std::uint64_t>(index[d]) >= static_cast<std::uint64_t>(t.shape[d])) return false;
      out = out * static_cast<std::size_t>(t.shape[d]) + static_cast<std::size_t>(index[d]);
    }
    return true;
  }
  const Tracked* find(const strata::detail::ArrayBase& array) const {
    for (const auto& t : arrays_)
      if (t.array == &array) return &t;
    return nullptr;
  }

  std::vector<Tracked> arrays_;
  std::size_t units_ = 0;  ///< places in the numbering of unit_of, gaps included
  /// One per unit, arrays_ after one another. The units of a small array (a relation
  /// table, counters: hot, every worker claims them all the time) get a cache line
  /// each, so that claims of different units do not move one line between cores.
  std::vector<std::atomic<std::uint64_t>> states_;
  std::vector<std::uint8_t> lockable_;              ///< per unit: 1 when lockable
  /// Per unit, on a rank of a spread plan: held (its part), absent or borrowed
  /// (make_absent, make_borrowed); empty where every unit is held.
  std::vector<std::uint8_t> absent_;
  static constexpr std::uint8_t kHeld = 0, kAbsentUnit = 1, kBorrowedUnit = 2;
  /// Bytes a unit from which an array's writes are logged, or an array the loop only
  /// reads is tracked (by row).
  static constexpr std::size_t kLargeUnit = 64;
  std::vector<WriteLog> logs_;                      ///< per worker thread of this rank
  std::vector<std::uint8_t> marks_;                 ///< per unit, after mark_only(): kMark* bits
  std::vector<strata::detail::ClaimView> views_;  ///< per tracked array, into marks_ or states_
  std::size_t lockable_count_ = 0;
};

}  // namespace strata::loop
