// A loop call's schedule for an execution record (strata/recovery/execution_record.hpp):
// every iteration with the worker that ran it and its step, gathered from all ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "strata/detail/pack.hpp"
#include "strata/dist_array.hpp"
#include "strata/error.hpp"
#include "strata/index.hpp"
#include "strata/recovery/execution_record.hpp"
#include "strata/runtime.hpp"

namespace strata::loop::detail {

/// One iteration of a loop call as a schedule lists it.
template <std::size_t M>
struct ScheduledIteration {
  std::int64_t step, worker, seq;  ///< worker: rank x threads + thread; seq: its place in the worker's order
  Index<M> index;
};

/// Every rank's iterations (collective), sorted by (step, worker, seq).
template <std::size_t M>
std::vector<ScheduledIteration<M>> gather_schedule(Runtime& rt, const std::vector<ScheduledIteration<M>>& mine) {
  using Item = ScheduledIteration<M>;
  Bytes buf;
  strata::detail::append_span<Item>(buf, mine);
  std::vector<Item> all;
  for (const auto& part : rt.comm().allgatherv(buf)) {
    const auto v = strata::detail::as_vector<Item>(part);
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) {
    return std::tie(a.step, a.worker, a.seq) < std::tie(b.step, b.worker, b.seq);
  });
  return all;
}

/// The record's form of a gathered schedule whose steps are clocks (`clocks` of them).
template <std::size_t M>
recovery::RecordedSchedule to_recorded(const std::vector<ScheduledIteration<M>>& all, std::int64_t clocks) {
  recovery::RecordedSchedule s;
  s.dims = static_cast<int>(M);
  s.clocks = clocks;
  s.rows.reserve(all.size() * (M + 2));
  for (const auto& it : all) {
    s.rows.insert(s.rows.end(), it.index.begin(), it.index.end());
    s.rows.push_back(it.worker);
    s.rows.push_back(it.step);
  }
  return s;
}

/// A replay: the index of a recorded schedule's row and its element of `space`.
template <class Elem, std::size_t M>
std::pair<Index<M>, Elem*> recorded_iteration(DistArray<Elem, M>& space, std::span<const std::int64_t> row,
                                              const recovery::RecordedCall& call) {
  Index<M> i{};
  std::copy(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(M), i.begin());
  Elem* value = space.find(i);
  if (!value)
    throw ReplayError(fmt::format("replay of loop call {} at {}: index {} of the recorded schedule is not in the "
                                  "iteration space",
                                  call.call, call.site, to_string(i)));
  return {i, value};
}

}  // namespace strata::loop::detail
