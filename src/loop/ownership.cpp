#include "loop/ownership.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "loop/plan.hpp"

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
  states_ = std::vector<std::atomic<std::uint16_t>>(total);  // all untouched
}

void OwnershipTable::reset() {
  for (auto& s : states_) s.store(0, std::memory_order_relaxed);
}

bool OwnershipTable::claim_row_elements(const Tracked& t, std::size_t row, bool write, std::uint16_t tag) {
  const auto width = static_cast<std::size_t>(t.shape.back());
  for (std::size_t k = 0; k < width; ++k)
    if (!claim_unit(t.first + row * width + k, write, tag)) return false;
  return true;
}

bool OwnershipTable::take_unit(std::size_t unit, bool write, std::uint16_t tag) {
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
