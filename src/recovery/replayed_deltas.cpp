#include "recovery/replayed_deltas.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/detail/worker.hpp"
#include "loop/buffer_base.hpp"
#include "strata/relaxed.hpp"

namespace strata::recovery {

namespace {
detail::BufferBase& buffer_of(const RecordedCall& call, std::uint64_t id) {
  auto* b = detail::BufferBase::find_buffer(id);
  if (!b)
    throw ReplayError(fmt::format("replay of loop call {} at {}: it wrote array {} through a Buffer, which this run "
                                  "does not have",
                                  call.call, call.site, detail::array_label(id)));
  return *b;
}

Bytes copy_of(std::span<const std::byte> values) { return Bytes(values.begin(), values.end()); }
}  // namespace

// Serves every read of a logged array from the timing log: the next entry of the
// recorded worker the replay is playing (t_delta_set). Other accesses pass.
class ReplayedDeltas::LoggedReads final : public detail::AccessObserver {
 public:
  explicit LoggedReads(std::string call) : call_(std::move(call)) {}
  void add(detail::ArrayBase& array, const detail::RelaxedBase& table, RecordedTiming timing) {
    Logged l{&array, &table, std::move(timing), {}};
    l.next.assign(l.timing.reads.size(), 0);
    arrays_.push_back(std::move(l));
  }

  void* on_access(detail::ArrayBase& array, const std::source_location&, detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void*, std::size_t bytes) override {
    if (mode != detail::AccessMode::read) return nullptr;
    for (auto& l : arrays_) {
      if (l.array != &array) continue;
      const auto worker = static_cast<std::size_t>(detail::t_delta_set);
      const RecordedTiming::Part& reads = l.timing.reads.at(worker);
      std::int64_t& next = l.next[worker];
      const std::int64_t unit = l.table->unit_of(index);
      if (next >= reads.count)
        throw ReplayError(fmt::format("replay of {}: recorded worker {} reads {} (unit {}) more often than the "
                                      "record's {} read(s)",
                                      call_, worker, detail::array_label(array), unit, reads.count));
      const std::size_t entry = sizeof(std::int64_t) + l.timing.unit_bytes;
      const std::byte* at = reads.entries.data() + static_cast<std::size_t>(next) * entry;
      std::int64_t logged;
      std::memcpy(&logged, at, sizeof logged);
      if (logged != unit)
        throw ReplayError(fmt::format("replay of {}: read {} of {} by recorded worker {} is of unit {}; the record "
                                      "says unit {}",
                                      call_, next + 1, detail::array_label(array), worker, unit, logged));
      ++next;
      const std::size_t within =
          index.size() > 1 && !whole_last ? static_cast<std::size_t>(index.back()) * l.timing.element_bytes : 0;
      STRATA_CHECK(within + bytes <= l.timing.unit_bytes, "a logged read beyond its unit");
      return const_cast<std::byte*>(at + sizeof logged + within);
    }
    return nullptr;
  }

  // Every worker has read as often as it did in the recorded run.
  void check_all_read() const {
    for (const auto& l : arrays_)
      for (std::size_t w = 0; w < l.next.size(); ++w)
        if (l.next[w] != l.timing.reads[w].count)
          throw ReplayError(fmt::format("replay of {}: recorded worker {} read {} {} time(s); the record says {}",
                                        call_, w, detail::array_label(*l.array), l.next[w], l.timing.reads[w].count));
  }

 private:
  struct Logged {
    detail::ArrayBase* array;
    const detail::RelaxedBase* table;
    RecordedTiming timing;
    std::vector<std::int64_t> next;  // per worker: its next read
  };
  std::string call_;
  std::vector<Logged> arrays_;
};

ReplayedDeltas::ReplayedDeltas(const ExecutionRecord& record, const RecordedCall& call, std::int64_t clocks)
    : call_(fmt::format("loop call {} at {}", call.call, call.site)),
      clocks_(clocks),
      ranks_(record.recorded_ranks()),
      threads_(record.recorded_threads()) {
  for (const auto id : call.relaxed) {
    auto& b = buffer_of(call, id);
    if (!b.relaxed())
      throw ReplayError(fmt::format("replay of loop call {} at {}: array {} was relaxed in the recorded run, not "
                                    "in this one",
                                    call.call, call.site, detail::array_label(id)));
    const Consistency& c = b.relaxed()->consistency();
    Relaxed r;
    r.buffer = &b;
    r.array = detail::ArrayBase::find_array(id);
    // What a reader saw under these depended on when messages arrived: the record
    // logged it.
    if (values_depend_on_timing(c)) {
      RecordedTiming t = record.timing(call, id, timing_files_);
      if (t.reads.size() != static_cast<std::size_t>(ranks_ * threads_) ||
          t.applies.size() != static_cast<std::size_t>(ranks_) || t.element_bytes != r.array->element_size())
        throw ReplayError(fmt::format("replay of {}: the timing log of {} does not fit the array or the recorded "
                                      "layout",
                                      call_, detail::array_label(id)));
      r.managed = c.is_managed();
      if (r.managed)
        for (const auto& part : t.applies) r.applies.push_back(part.entries);
      if (!logged_) logged_ = std::make_unique<LoggedReads>(call_);
      logged_->add(*r.array, *b.relaxed(), std::move(t));
    }
    r.written = std::find(call.buffers.begin(), call.buffers.end(), id) != call.buffers.end();
    r.staleness = c.staleness;
    if (records_cache_versions(c)) r.versions = record.cache_versions(call, id);
    if (r.versions.clocks != 0 && r.versions.clocks != clocks)
      throw ReplayError(fmt::format("replay of loop call {} at {}: the record holds cache versions of {} for {} "
                                    "clock(s), its schedule has {}",
                                    call.call, call.site, detail::array_label(id), r.versions.clocks, clocks));
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
    if (!r.written || r.managed) continue;  // nothing changes it in this call, or not before finish()
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

detail::AccessObserver* ReplayedDeltas::observer() const { return logged_.get(); }

void ReplayedDeltas::finish() {
  if (logged_) logged_->check_all_read();
  for (auto& r : relaxed_) {
    if (r.managed) {
      r.buffer->replay_apply_logged(r.applies, r.first_round, call_);
    } else if (r.written) {
      apply_through(r, clocks_ - 1);
      show(r, r.applied - 1);
    }
  }
  for (auto* b : buffers_) b->replay_apply(ranks_, b->replay_reserve(1));
}

}  // namespace strata::recovery
