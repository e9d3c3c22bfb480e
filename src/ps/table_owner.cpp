// A relaxed table's message protocol and owner side, on the Postman's thread: the
// clock's deltas from every rank applied in rank order, early deltas as they arrive,
// updates to readers, and reads answered as of the reader's clock.
#include <cstring>

#include "ps/ps_internal.hpp"
#include "strata/detail/pack.hpp"

namespace strata::ps {

void Table::on_message(int from, std::span<const std::byte> body) {
  Header h;
  std::memcpy(&h, body.data(), sizeof h);
  const auto payload = body.subspan(sizeof h);
  switch (h.kind) {
    case kDeltas: {
      {
        std::lock_guard lock(mu_);
        auto& per_rank = inbound_[h.clock];
        per_rank.resize(staged_.size());
        per_rank[static_cast<std::size_t>(from)].assign(payload.begin(), payload.end());
        ++arrived_[h.clock];
      }
      apply_ready();
      break;
    }
    case kEarly: {
      for_record_runs(ops_, geo_, payload, [&](const OwnedRun& run) { apply_run(run, h.clock, changed_); });
      break;
    }
    case kValues: {
      std::lock_guard lock(mu_);
      auto& s = staged_[static_cast<std::size_t>(from)];
      s.clock = h.clock;  // one owner's messages arrive in the order it sent them
      s.updates.emplace_back(h.clock, Bytes(payload.begin(), payload.end()));
      ++received_[static_cast<std::size_t>(from)];
      cv_.notify_all();
      break;
    }
    case kRead: {
      {
        // A reader whose cache holds clock m sees the unit as of clock m: until
        // this owner has applied it, the request waits (apply_ready answers it).
        std::lock_guard lock(mu_);
        if (must_wait(h)) {
          deferred_reads_.push_back({from, h});
          break;
        }
      }
      answer_read(from, h);
      break;
    }
    case kReadReply: {
      std::lock_guard lock(mu_);
      Waiter& w = waiters_[static_cast<std::size_t>(h.thread)];
      w.values.assign(payload.begin(), payload.end());
      w.ready = true;
      cv_.notify_all();
      break;
    }
    default: STRATA_CHECK(false, "an unknown parameter-server message");
  }
}

// The unit a kRead asked for, to the reader: the owner's master value, rolled back
// over the clocks applied after the one the reader's cache holds (there are some
// only under SSP; with managed communication the master value, early deltas and
// all, is the point).
void Table::answer_read(int reader, const Header& ask) {
  const std::size_t row = row_bytes();
  Bytes reply;
  detail::append(reply, Header{kReadReply, ask.thread, 0, ask.unit});
  const std::size_t at = reply.size();
  reply.resize(at + row);
  const std::int64_t off = unit_offset(ask.unit);
  STRATA_CHECK(off >= 0, "a read reached a rank that does not own the unit");
  std::memcpy(reply.data() + at, values() + static_cast<std::size_t>(off) * elem_, row);
  if (keeps_history_) {
    std::int64_t applied;
    {
      std::lock_guard lock(mu_);
      applied = next_apply_;
    }
    STRATA_CHECK(history_.oldest(applied) <= ask.clock + 1, "a read older than the kept history");
    history_.roll_back(off / unit_len_, ask.clock, reply.data() + at);
  }
  server_send(reader, reply);
}

// Folds a run of deltas of clock `clock` in at their owner (this rank) and notes
// their units as changed: the next update each of their readers gets carries them.
void Table::apply_run(const OwnedRun& run, std::int64_t clock, std::vector<std::int64_t>& changed) {
  const std::byte* v = values();
  const std::size_t row = row_bytes();
  for (std::size_t j = 0; j < run.n; ++j) {
    const auto u = static_cast<std::size_t>(geo_.dims > 1 ? run.offsets[j] / unit_len_ : run.offsets[j]);
    if (!is_changed_[u]) {
      is_changed_[u] = 1;
      changed.push_back(static_cast<std::int64_t>(u));
      if (keeps_history_) history_.note(static_cast<std::int64_t>(u), v + u * row);
    }
  }
  apply_logged(run, clock);
}

void Table::apply_logged(const OwnedRun& run, std::int64_t clock) {
  if (logging_)
    for (std::size_t j = 0; j < run.n; ++j) log_.applied(run.keys[j], clock, run.deltas + j * run.stride);
  ops_.apply(run.offsets, run.deltas, run.stride, run.n, round_ + clock);
}

// Applies every clock whose deltas have all arrived, in clock order and, within a
// clock, in rank order; then sends each reader its refreshed block.
void Table::apply_ready() {
  const int R = static_cast<int>(staged_.size());
  for (;;) {
    std::vector<Bytes> per_rank;
    std::int64_t clock;
    {
      std::lock_guard lock(mu_);
      clock = next_apply_;
      if (arrived_[clock] < R) return;
      per_rank = std::move(inbound_[clock]);
      inbound_.erase(clock);
      arrived_.erase(clock);
    }
    if (keeps_history_) history_.begin_clock(clock);
    const auto apply = [&](const OwnedRun& run) { apply_run(run, clock, changed_); };
    for (const auto& from : per_rank) {
      if (geo_.row_len > 1) for_row_runs(ops_, geo_, from, apply);  // flush_clock's format
      else for_record_runs(ops_, geo_, from, apply);
    }
    if (clock + 1 < clocks_)
      for (int q = 0; q < R; ++q)
        if (!serves_[static_cast<std::size_t>(q)].empty()) server_send(q, update_for(q, clock));
    for (const auto u : changed_) is_changed_[static_cast<std::size_t>(u)] = 0;
    changed_.clear();
    std::vector<std::pair<int, Header>> now;
    {
      std::lock_guard lock(mu_);
      ++next_apply_;
      // Every rank has sent clock next_apply_-1, so no reader's cache is older
      // than clock next_apply_-1-s: only the clocks after that can be asked about.
      if (keeps_history_) history_.forget_before(next_apply_ - consistency_.staleness);
      cv_.notify_all();
      std::erase_if(deferred_reads_, [&](const auto& d) {
        if (must_wait(d.second)) return false;
        now.push_back(d);
        return true;
      });
    }
    for (const auto& [reader, ask] : now) answer_read(reader, ask);
  }
}

}  // namespace strata::ps
