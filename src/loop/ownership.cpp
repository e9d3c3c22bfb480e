#include "loop/ownership.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "loop/plan.hpp"
#include "strata/error.hpp"

namespace strata::loop {
namespace {

using Kind = analysis::Subscript::Kind;

}  // namespace

bool keyed_by_row(const Plan& plan, std::uint64_t array_id) {
  for (const auto& s : plan.sites)
    if (s.array_id == array_id && s.subs.size() > 1 && s.subs.back().kind == Kind::whole) return true;
  return false;
}

std::vector<std::uint64_t> row_keyed_arrays(const Plan& plan) {
  std::vector<std::uint64_t> ids;
  for (const auto& role : plan.roles)
    if (keyed_by_row(plan, role.array_id)) ids.push_back(role.array_id);
  return ids;
}

OwnershipTable::OwnershipTable(const Plan& plan, bool track_reads) {
  for (const auto& role : plan.roles) {
    // Read-only and Buffer-written arrays conflict with nothing.
    if (!role.written && !(track_reads && role.read)) continue;
    auto* array = strata::detail::ArrayBase::find_array(role.array_id);
    if (!array) continue;
    const bool read_only = !role.written;
    const auto shape = array->shape_vector();
    // Reads never conflict, so an array the loop only reads is tracked by row: a unit
    // costs about 11 bytes of table, which rows of 64 bytes or more are worth; narrower
    // ones, and 1-D arrays, are copied whole for a call instead.
    if (read_only && (shape.size() < 2 || array->element_size() * static_cast<std::size_t>(shape.back()) < kLargeUnit))
      continue;
    Tracked t{array, role.name, shape, read_only || keyed_by_row(plan, role.array_id), read_only};
    t.count = 1;
    for (std::size_t d = 0; d + (t.by_row ? 1 : 0) < t.shape.size(); ++d)
      t.count *= static_cast<std::size_t>(t.shape[d]);
    t.unit_bytes = array->element_size() * (t.by_row ? static_cast<std::size_t>(t.shape.back()) : 1);
    // A log entry costs a place (8 bytes) besides the unit: smaller units are copied.
    // A sparse array's storage holds its values in key order, not the array
    // row-major, so its units have no place there to save or restore: copied too.
    t.logs = role.written && !array->is_sparse_array() && t.unit_bytes >= kLargeUnit;
    arrays_.push_back(std::move(t));
  }
  // Small arrays: a cache line per unit's state (see states_).
  constexpr std::size_t kSpreadUpTo = 1024, kPerLine = 64 / sizeof(std::uint64_t);
  std::size_t total = 0;
  for (auto& t : arrays_) {
    t.stride = t.count <= kSpreadUpTo ? kPerLine : 1;
    t.first = total;
    total += t.count * t.stride;
  }
  units_ = total;
  states_ = std::vector<std::atomic<std::uint64_t>>(total);  // all untouched
  lockable_.assign(total, 0);
  logs_ = std::vector<WriteLog>(static_cast<std::size_t>(std::max(1, plan.threads)));
}

std::uint64_t OwnershipTable::unit_of(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                                      bool whole_last) const {
  const Tracked* t = find(array);
  if (!t || (whole_last && !t->by_row)) return kNoUnit;
  std::size_t unit;
  if (!linear(*t, index, t->by_row ? t->shape.size() - 1 : t->shape.size(), unit)) return kNoUnit;
  return t->first + unit * t->stride;
}

bool OwnershipTable::same_units(const OwnershipTable& other) const {
  if (arrays_.size() != other.arrays_.size()) return false;
  for (std::size_t k = 0; k < arrays_.size(); ++k) {
    const Tracked &a = arrays_[k], &b = other.arrays_[k];
    if (a.array != b.array || a.by_row != b.by_row || a.read_only != b.read_only || a.shape != b.shape ||
        a.stride != b.stride)
      return false;
  }
  return true;
}

void OwnershipTable::make_arrays_lockable(std::span<const std::uint32_t> units) {
  STRATA_CHECK(!marks_only(), "split groups need claim words (several threads a rank), not marks");
  for (Tracked& t : arrays_) {
    const bool holds_one = std::any_of(units.begin(), units.end(), [&](std::uint32_t u) {
      return u >= t.first && u < t.first + t.count * t.stride;
    });
    if (!holds_one) continue;
    t.logs = false;  // its units are written under locks, not claims: copied before a run
    for (std::size_t k = 0; k < t.count; ++k) {
      std::uint8_t& mark = lockable_[t.first + k * t.stride];
      lockable_count_ += mark == 0 ? 1 : 0;
      mark = 1;
    }
  }
}

void OwnershipTable::mark_only() {
  marks_.assign(units_, 0);
  strata::detail::free_now(states_);  // the marks replace the claim words
}

void OwnershipTable::attach_views() {
  views_.clear();
  for (const Tracked& t : arrays_) {
    strata::detail::ClaimView v;
    if (marks_only()) v.marks = marks_.data() + t.first;
    else v.states = states_.data() + t.first;
    v.stride = t.stride;
    v.by_row = t.by_row;
    views_.push_back(v);
  }
  for (std::size_t k = 0; k < views_.size(); ++k)
    const_cast<strata::detail::ArrayBase*>(arrays_[k].array)->set_claim_view(&views_[k]);
}

void OwnershipTable::detach_views() {
  for (const Tracked& t : arrays_) const_cast<strata::detail::ArrayBase*>(t.array)->set_claim_view(nullptr);
}

void OwnershipTable::reset() {
  if (!marks_.empty()) std::fill(marks_.begin(), marks_.end(), 0);
  else
    for (auto& s : states_) s.store(0, std::memory_order_relaxed);
  drop_logs();
  for (std::size_t p = 0; p < absent_.size(); ++p) {
    if (absent_[p] != kAbsentUnit) continue;
    if (!marks_.empty()) marks_[p] = strata::detail::ClaimView::absent;
    else states_[p].store(kAbsent, std::memory_order_relaxed);
  }
}

bool OwnershipTable::claim_row_elements(const Tracked& t, std::size_t row, bool write, int worker) {
  const auto width = static_cast<std::size_t>(t.shape.back());
  for (std::size_t k = 0; k < width; ++k)
    if (!claim_unit(t, t.first + (row * width + k) * t.stride, write, worker)) return false;
  return true;
}

void OwnershipTable::log_write(const Tracked& t, std::size_t place, int worker) {
  if (!t.logs || (!absent_.empty() && absent_[place] == kBorrowedUnit)) return;
  const std::size_t unit = (place - t.first) / t.stride;
  // The storage holds the whole array row-major while runs claim (attach_views).
  const std::span<std::byte> bytes = const_cast<strata::detail::ArrayBase*>(t.array)->local_bytes();
  STRATA_CHECK((unit + 1) * t.unit_bytes <= bytes.size(), "a claimed unit lies outside its array's storage");
  STRATA_CHECK(static_cast<std::size_t>(worker) < logs_.size(), "a claim from a worker the table has no log for");
  logs_[static_cast<std::size_t>(worker)].save(place, bytes.subspan(unit * t.unit_bytes, t.unit_bytes));
}

void OwnershipTable::undo_logged_writes() {
  for (const WriteLog& log : logs_)
    log.for_each([&](std::size_t place, const std::byte* old) {
      const auto t = std::find_if(arrays_.begin(), arrays_.end(), [&](const Tracked& x) {
        return place >= x.first && place < x.first + x.count * x.stride;
      });
      STRATA_CHECK(t != arrays_.end(), "a logged unit of no tracked array");
      const std::size_t unit = (place - t->first) / t->stride;
      const std::span<std::byte> bytes = const_cast<strata::detail::ArrayBase*>(t->array)->local_bytes();
      std::memcpy(bytes.data() + unit * t->unit_bytes, old, t->unit_bytes);
      return t->unit_bytes;
    });
  drop_logs();
}

void OwnershipTable::drop_logs() {
  for (WriteLog& log : logs_) log.clear();
}

std::size_t OwnershipTable::logged_bytes() const {
  std::size_t n = 0;
  for (const WriteLog& log : logs_) n += log.bytes();
  return n;
}

bool OwnershipTable::take_unit(std::size_t unit, bool write, std::uint64_t tag) {
  std::atomic<std::uint64_t>& state = states_[unit];
  std::uint64_t now = state.load(std::memory_order_relaxed);
  // A lockable unit is touched only under its lock: the holder's first access marks
  // it touched (a plain store: while it holds the lock, nobody else writes the word);
  // any other claim does not hold it.
  if (lockable_[unit]) {
    if (state_of(now) != (kWritten | kUntouched | tag)) return false;
    state.store((now & kClockMask) | kWritten | tag, std::memory_order_relaxed);
    return true;
  }
  for (;;) {
    const std::uint64_t held = state_of(now);
    std::uint64_t next;
    if (write) {
      if (held == (kWritten | tag)) return true;
      if (held != 0 && held != tag) return false;  // read or written by another worker
      next = kWritten | tag;
    } else {
      if (held == tag || held == kShared || held == (kWritten | tag)) return true;
      if (held & kWritten) return false;  // written by another worker
      next = held == 0 ? tag : kShared;
    }
    // acq_rel: a claim that wins is ordered with the claims other workers make next.
    if (state.compare_exchange_weak(now, (now & kClockMask) | next, std::memory_order_acq_rel,
                                    std::memory_order_relaxed))
      return true;
  }
}

std::string OwnershipTable::refusal(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                                    bool whole_last, bool write) const {
  const Tracked* t = find(array);
  if (write && (!t || t->read_only)) return "writes an array the plan never saw written";
  if (!t) return "";
  std::size_t unit;
  const bool one_unit = t->by_row || !whole_last;
  if (absent_.empty() || !linear(*t, index, one_unit && !t->by_row ? t->shape.size() : t->shape.size() - 1, unit))
    return "";
  const auto width = one_unit ? std::size_t{1} : static_cast<std::size_t>(t->shape.back());
  for (std::size_t k = 0; k < width; ++k)
    if (absent_[t->first + (unit * width + k) * t->stride] == kAbsentUnit)
      return "lies outside what this rank holds for the call (its part, and the units its conflict groups "
             "touched when the loop was planned)";
  return "";
}

std::string OwnershipTable::describe() const {
  std::vector<std::string> parts;
  for (const auto& t : arrays_)
    parts.push_back(fmt::format("{} (by {}, {} {}s{})", t.name, t.by_row ? "row" : "element", t.count,
                                t.by_row ? "row" : "element", t.read_only ? ", read only" : ""));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace strata::loop
