// A loop call's schedule for an execution record (recovery/execution_record.hpp):
// every iteration with the worker that ran it and its step, gathered from all ranks.
#include <algorithm>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/error.hpp"

namespace strata::loop::detail {

std::vector<std::int64_t> gather_schedule(Runtime& rt, std::vector<std::int64_t> mine, int dims) {
  const std::size_t width = kScheduleFields + static_cast<std::size_t>(dims);
  std::vector<std::int64_t> all;
  for (const auto& part : rt.comm().allgatherv(std::as_bytes(std::span(mine)))) {
    const auto* v = reinterpret_cast<const std::int64_t*>(part.data());
    all.insert(all.end(), v, v + part.size() / sizeof(std::int64_t));
  }
  // Sort row numbers by (step, worker, seq), then lay the rows out in that order.
  std::vector<std::size_t> order(all.size() / width);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::int64_t* x = &all[a * width];
    const std::int64_t* y = &all[b * width];
    return std::tie(x[0], x[1], x[2]) < std::tie(y[0], y[1], y[2]);
  });
  std::vector<std::int64_t> sorted;
  sorted.reserve(all.size());
  for (const std::size_t k : order)
    sorted.insert(sorted.end(), all.begin() + static_cast<std::ptrdiff_t>(k * width),
                  all.begin() + static_cast<std::ptrdiff_t>((k + 1) * width));
  return sorted;
}

RecordedSchedule to_recorded(const std::vector<std::int64_t>& rows, int dims, std::int64_t clocks) {
  const std::size_t width = kScheduleFields + static_cast<std::size_t>(dims);
  RecordedSchedule s;
  s.dims = dims;
  s.clocks = clocks;
  s.rows.reserve(rows.size() / width * static_cast<std::size_t>(dims + 2));
  for (std::size_t at = 0; at < rows.size(); at += width) {
    s.rows.insert(s.rows.end(), rows.begin() + static_cast<std::ptrdiff_t>(at + kScheduleFields),
                  rows.begin() + static_cast<std::ptrdiff_t>(at + width));
    s.rows.push_back(rows[at + 1]);  // worker
    s.rows.push_back(rows[at]);      // step
  }
  return s;
}

std::byte* recorded_element(const SpaceView& space, std::span<const std::int64_t> row,
                            const RecordedCall& call) {
  if (std::byte* value = locate(space, row.data())) return value;
  std::string index = "(";
  for (int d = 0; d < space.dims; ++d) index += fmt::format("{}{}", d ? ", " : "", row[static_cast<std::size_t>(d)]);
  index += ")";
  throw ReplayError(fmt::format("replay of loop call {} at {}: index {} of the recorded schedule is not in the "
                                "iteration space",
                                call.call, call.site, index));
}

}  // namespace strata::loop::detail
