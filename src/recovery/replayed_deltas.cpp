#include "strata/recovery/replayed_deltas.hpp"

#include <algorithm>
#include <cstring>

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

Bytes copy_of(std::span<const std::byte> values) { return Bytes(values.begin(), values.end()); }
}  // namespace

ReplayedDeltas::ReplayedDeltas(const ExecutionRecord& record, const RecordedCall& call, std::int64_t clocks)
    : clocks_(clocks), ranks_(record.recorded_ranks()), threads_(record.recorded_threads()) {
  for (const auto id : call.relaxed) {
    auto& b = buffer_of(call, id);
    if (!b.relaxed())
      throw ReplayError(fmt::format("replay of loop call {} at {}: array {} was relaxed in the recorded run, not "
                                    "in this one",
                                    call.call, call.site, label_of(id)));
    const Consistency& c = b.relaxed()->consistency();
    // What a reader saw under these depended on when messages arrived, and the
    // record does not hold it.
    const char* why = c.is_managed() ? "managed communication" : c.hybrid ? "Hybrid consistency" : nullptr;
    if (why)
      throw ReplayError(fmt::format("replay of loop call {} at {}: its relaxed array {} ran with {}, whose values "
                                    "depend on timing; replay it on the recorded ranks and threads, or record it "
                                    "without {}",
                                    call.call, call.site, label_of(id), why, why));
    Relaxed r;
    r.buffer = &b;
    r.array = detail::ArrayBase::find_array(id);
    r.written = std::find(call.buffers.begin(), call.buffers.end(), id) != call.buffers.end();
    r.staleness = c.staleness;
    if (records_cache_versions(c)) r.versions = record.cache_versions(call, id);
    if (r.versions.clocks != 0 && r.versions.clocks != clocks)
      throw ReplayError(fmt::format("replay of loop call {} at {}: the record holds cache versions of {} for {} "
                                    "clock(s), its schedule has {}",
                                    call.call, call.site, label_of(id), r.versions.clocks, clocks));
    relaxed_.push_back(std::move(r));
  }
  for (const auto id : call.buffers) buffers_.push_back(&buffer_of(call, id));
  for (auto* b : buffers_) b->replay_begin(ranks_ * threads_);  // nothing throws from here on
  // As each table's run began: its apply state readied and a round per clock.
  for (auto& r : relaxed_) {
    r.first_round = r.buffer->replay_reserve(clocks);
    if (!r.versions.values.empty()) r.kept[-1] = copy_of(r.array->local_bytes());
  }
}

ReplayedDeltas::~ReplayedDeltas() {
  for (auto* b : buffers_) b->replay_end();
}

// Applies the clocks up to `last` that are not yet applied, each to the newest values.
void ReplayedDeltas::apply_through(Relaxed& r, std::int64_t last) {
  for (; r.applied <= last && r.applied < clocks_; ++r.applied) {
    show(r, r.applied - 1);
    r.buffer->replay_apply(ranks_, r.first_round + r.applied);
    r.shown = r.applied;
    if (!r.versions.values.empty()) r.kept[r.applied] = copy_of(r.array->local_bytes());
  }
}

// Puts the values of `version` (applied, and kept unless it is the newest) in the array.
void ReplayedDeltas::show(Relaxed& r, std::int64_t version) {
  if (r.shown == version) return;
  const Bytes& values = r.kept.at(version);
  const auto to = r.array->local_bytes();
  std::memcpy(to.data(), values.data(), to.size());
  r.shown = version;
}

void ReplayedDeltas::advance_to(std::int64_t clock, std::int64_t worker) {
  const int rank = static_cast<int>(worker / threads_);
  for (auto& r : relaxed_) {
    if (!r.written) continue;  // nothing changes it in this call
    const std::int64_t version =
        r.versions.values.empty() ? clock - 1 : r.versions.of_rank(rank)[static_cast<std::size_t>(clock)];
    // Every clock before this one, and none after: the delta sets already hold
    // this clock's writes of the workers played so far.
    apply_through(r, clock - 1);
    show(r, version);
    // No later iteration reads a version older than clock-s-1.
    std::erase_if(r.kept, [&](const auto& k) { return k.first < clock - r.staleness - 1 && k.first != r.applied - 1; });
  }
}

void ReplayedDeltas::finish() {
  for (auto& r : relaxed_)
    if (r.written) {
      apply_through(r, clocks_ - 1);
      show(r, r.applied - 1);
    }
  for (auto* b : buffers_) b->replay_apply(ranks_, b->replay_reserve(1));
}

}  // namespace strata::recovery
