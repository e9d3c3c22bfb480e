#include "strata/recovery/replayed_deltas.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/loop/access.hpp"
#include "strata/ps/buffer_base.hpp"
#include "strata/relaxed.hpp"

namespace strata::recovery {

namespace {
std::string label_of(std::uint64_t id) {
  auto* a = detail::ArrayBase::find_array(id);
  return a ? detail::array_label(*a) : fmt::format("#{}", id);
}

detail::BufferBase& buffer_of(const RecordedCall& call, std::uint64_t id) {
  auto* b = detail::BufferBase::find_buffer(id);
  if (!b)
    throw ReplayError(fmt::format("replay of loop call {} at {}: it wrote array {} through a Buffer, which this run "
                                  "does not have",
                                  call.call, call.site, label_of(id)));
  return *b;
}
}  // namespace

ReplayedDeltas::ReplayedDeltas(const RecordedCall& call, std::int64_t clocks, int ranks, int threads)
    : clocks_(clocks), ranks_(ranks) {
  for (const auto id : call.relaxed) {
    auto& b = buffer_of(call, id);
    const bool written = std::find(call.buffers.begin(), call.buffers.end(), id) != call.buffers.end();
    relaxed_.push_back({&b, 0, written});
    if (!b.relaxed())
      throw ReplayError(fmt::format("replay of loop call {} at {}: array {} was relaxed in the recorded run, not "
                                    "in this one",
                                    call.call, call.site, label_of(id)));
    const Consistency& c = b.relaxed()->consistency();
    // What a reader saw under these depended on when messages arrived; the record
    // does not hold it.
    const char* why = c.staleness > 0 ? "stale-synchronous reads (staleness above 0)"
                      : c.is_managed() ? "managed communication"
                      : c.hybrid       ? "Hybrid consistency"
                                       : nullptr;
    if (why)
      throw ReplayError(fmt::format("replay of loop call {} at {}: its relaxed array {} ran with {}, whose values "
                                    "depend on timing; replay it on the recorded ranks and threads, or record it "
                                    "with bulk-synchronous consistency",
                                    call.call, call.site, label_of(id), why));
  }
  for (const auto id : call.buffers) buffers_.push_back(&buffer_of(call, id));
  for (auto* b : buffers_) b->replay_begin(ranks * threads);  // nothing throws from here on
  // As each table's run began: its apply state readied and a round per clock.
  for (auto& r : relaxed_) r.first_round = r.buffer->replay_reserve(clocks);
}

ReplayedDeltas::~ReplayedDeltas() {
  for (auto* b : buffers_) b->replay_end();
}

void ReplayedDeltas::advance_to(std::int64_t clock) {
  for (; applied_ < std::min(clock, clocks_); ++applied_)
    for (const auto& r : relaxed_)
      if (r.written) r.buffer->replay_apply(ranks_, r.first_round + applied_);
}

void ReplayedDeltas::finish() {
  advance_to(clocks_);
  for (auto* b : buffers_) b->replay_apply(ranks_, b->replay_reserve(1));
}

}  // namespace strata::recovery
