#include "loop/ownership.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "loop/plan.hpp"

namespace strata::loop {
namespace {

using Kind = analysis::Subscript::Kind;

// A unit's state: 0 untouched; w + 1 read by worker w only; kShared read by several
// workers; kWritten | (w + 1) written (and perhaps read) by worker w only.
constexpr std::uint16_t kShared = 0x7fff;
constexpr std::uint16_t kWritten = 0x8000;

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

OwnershipTable::OwnershipTable(const Plan& plan) {
  for (const auto& role : plan.roles) {
    if (!role.written) continue;  // read-only and Buffer-written arrays conflict with nothing
    auto* array = strata::detail::ArrayBase::find_array(role.array_id);
    if (!array) continue;
    Tracked t{array, role.name, array->shape_vector(), keyed_by_row(plan, role.array_id)};
    t.count = 1;
    for (std::size_t d = 0; d + (t.by_row ? 1 : 0) < t.shape.size(); ++d)
      t.count *= static_cast<std::size_t>(t.shape[d]);
    arrays_.push_back(std::move(t));
  }
  std::size_t total = 0;
  for (auto& t : arrays_) {
    t.first = total;
    total += t.count;
  }
  states_storage_ = std::make_unique<std::atomic<std::uint16_t>[]>(total);
  states_ = {states_storage_.get(), total};
  reset();
}

void OwnershipTable::reset() {
  for (auto& s : states_) s.store(0, std::memory_order_relaxed);
}

const OwnershipTable::Tracked* OwnershipTable::find(const strata::detail::ArrayBase& array) {
  for (const auto& t : arrays_)
    if (t.array == &array) return &t;
  return nullptr;
}

bool OwnershipTable::claim(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                           bool whole_last, bool write, int worker) {
  const Tracked* t = find(array);
  if (!t) return !write;  // the plan knows of no write to this array: a site it never saw
  const auto tag = static_cast<std::uint16_t>(worker + 1);
  const std::size_t dims = t->shape.size();
  const std::size_t prefix = t->by_row || whole_last ? dims - 1 : dims;  // subscripts that pick the unit
  std::size_t unit = 0;
  for (std::size_t d = 0; d < prefix; ++d) {
    // Out-of-shape subscripts are the accessor's to report; they claim nothing.
    if (index[d] < 0 || index[d] >= t->shape[d]) return true;
    unit = unit * static_cast<std::size_t>(t->shape[d]) + static_cast<std::size_t>(index[d]);
  }
  if (t->by_row || !whole_last) return claim_unit(t->first + unit, write, tag);
  // A whole row of an array tracked by element: every element of the row.
  const auto width = static_cast<std::size_t>(t->shape[dims - 1]);
  for (std::size_t k = 0; k < width; ++k)
    if (!claim_unit(t->first + unit * width + k, write, tag)) return false;
  return true;
}

bool OwnershipTable::claim_unit(std::size_t unit, bool write, std::uint16_t tag) {
  std::atomic<std::uint16_t>& state = states_[unit];
  std::uint16_t now = state.load(std::memory_order_relaxed);
  for (;;) {
    std::uint16_t next;
    if (write) {
      if (now == (kWritten | tag)) return true;
      if (now != 0 && now != tag) return false;  // read or written by another worker
      next = kWritten | tag;
    } else {
      if (now == tag || now == kShared || now == (kWritten | tag)) return true;
      if (now & kWritten) return false;  // written by another worker
      next = now == 0 ? tag : kShared;
    }
    // acq_rel: a claim that wins is ordered with the claims other workers make next.
    if (state.compare_exchange_weak(now, next, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  }
}

std::string OwnershipTable::describe() const {
  std::vector<std::string> parts;
  for (const auto& t : arrays_)
    parts.push_back(fmt::format("{} (by {}, {} {}s)", t.name, t.by_row ? "row" : "element", t.count,
                                t.by_row ? "row" : "element"));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace strata::loop
