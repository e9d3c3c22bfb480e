// A plan's positions after packing. Once a thread's work is packed into records, the
// positions of its iterations (plan.work, 4 bytes an iteration: 36 MB for mf's 9M
// ratings) serve only to copy changed elements into the records again and to list
// the schedule (record mode). Where the records hold copies of the elements (a body
// that takes its element by value) the positions can be let go and found again from
// the records' subscripts when needed; where they hold pointers, or the plan's
// groups, claims or relaxed tables work by position, they stay.
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "loop/loop_internal.hpp"

namespace strata::loop::detail {
namespace {

// The subscripts of record k of `records`, as pack_records wrote them: 16-bit offsets
// from the list's base, 32-bit or 64-bit subscripts, at the record's start.
void record_index(const Plan& plan, const std::byte* record, const std::int64_t* base, int dims, std::int64_t* out) {
  for (int d = 0; d < dims; ++d) {
    const auto at = static_cast<std::size_t>(d);
    if (plan.narrow_records) {
      std::uint16_t offset;
      std::memcpy(&offset, record + at * sizeof offset, sizeof offset);
      out[d] = base[d] + offset;
    } else if (plan.compact_records) {
      std::int32_t index;
      std::memcpy(&index, record + at * sizeof index, sizeof index);
      out[d] = index;
    } else {
      std::memcpy(&out[d], record + at * sizeof(std::int64_t), sizeof(std::int64_t));
    }
  }
}

}  // namespace

bool positions_can_go(const Plan& plan, const LoopBody& body) {
  return body.reads_only && !plan.hosted && !plan.split && !plan.ownership && relaxed_arrays(plan).empty() &&
         plan.choice.strategy != analysis::Strategy::groups;
}

void drop_positions(Plan& plan) {
  for (auto& steps : plan.work)
    for (auto& list : steps) strata::detail::free_now(list);
  plan.positions_dropped = true;
  // The lists are many small blocks (mf: 1,280 of 28 KB) in the middle of malloc's
  // heap, which it keeps when they are freed; trimming hands their pages back
  // (without it mf's steady resident set fell by 19 MB of the 36 let go).
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

std::vector<std::uint32_t> positions_of(const SpaceView& space, const Plan& plan, int th, int step) {
  const auto t = static_cast<std::size_t>(th), s = static_cast<std::size_t>(step);
  if (!plan.positions_dropped) return plan.work[t][s];
  const RecordBytes& records = plan.packed[t][s];
  const std::size_t n = records.size() / plan.record_size;
  const std::int64_t* base = plan.narrow_records ? plan.packed_base[t][s].data() : nullptr;
  std::vector<std::uint32_t> positions(n);
  std::int64_t index[4];
  for (std::size_t k = 0; k < n; ++k) {
    record_index(plan, records.data() + k * plan.record_size, base, space.dims, index);
    const std::byte* value = locate(space, index);
    STRATA_CHECK(value, "a packed record names an iteration the space does not hold");
    positions[k] = static_cast<std::uint32_t>((value - space.values) / static_cast<std::ptrdiff_t>(space.elem_size));
  }
  return positions;
}

void restore_positions(const SpaceView& space, Plan& plan) {
  if (!plan.positions_dropped) return;
  space.rt->pool().run([&](int th) {
    auto& steps = plan.work[static_cast<std::size_t>(th)];
    for (std::size_t step = 0; step < steps.size(); ++step)
      steps[step] = positions_of(space, plan, th, static_cast<int>(step));
  });
  plan.positions_dropped = false;
}

}  // namespace strata::loop::detail
