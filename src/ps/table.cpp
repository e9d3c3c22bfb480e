// A relaxed array's table (ps_internal.hpp): construction, the start and end of a
// loop call's run, and waiting for the Postman.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ps/ps_internal.hpp"
#include "strata/detail/pack.hpp"

namespace strata::ps {

Table::Table(detail::ArrayBase& target, Runtime& rt, ElementOps& ops, BufferEngine& engine, Consistency consistency)
    : target_(target),
      rt_(rt),
      ops_(ops),
      engine_(engine),
      consistency_(consistency),
      elem_(ops.element_size),
      geo_(Geometry::of(target, ops)),
      log_(ops.element_size) {
  detail::check_consistency(consistency, label(), ops.arithmetic);
  // Under SSP the cache takes the owners' values of an older clock, which lack the
  // rank's own adds of the clocks since: it folds them back in (refold_own). Early
  // deltas of managed communication may already be in those values, so not both.
  if (consistency.own_writes && consistency.staleness > 0 && consistency.is_managed())
    throw OptionError(fmt::format("relaxed array {}: read-my-writes under SSP cannot go with managed communication",
                                  label()));
  if (consistency.thread_replicas && !ops.subtracts())
    throw OptionError(fmt::format("relaxed array {}: a replica per thread sends each replica's changes as "
                                  "differences, so its elements must subtract (numbers, or a row struct with "
                                  "operator-)",
                                  label()));
  refolds_ = consistency.own_writes && consistency.staleness > 0 && rt.size() > 1;
  if (ops.arithmetic && consistency.is_managed()) {
    outbox_ = std::make_unique<ManagedOutbox>(ops.open_outbox(), rt.threads(), geo_.volume(), consistency,
                                              sizeof(Header), ops.record_size, rt.next_seed());
    managed_ = true;
  }
  unit_len_ = geo_.dims == 1 ? 1 : geo_.shape[geo_.dims - 1];
  geo_.row_len = std::max<std::int64_t>(unit_len_, 1);
  units_ = unit_len_ > 0 ? geo_.volume() / unit_len_ : 0;
  history_ = OwnerHistory<std::byte>(unit_len_ * static_cast<std::int64_t>(elem_));
  keeps_history_ = consistency.staleness > 0 && !managed_ && rt.size() > 1;
  counters_.resize(static_cast<std::size_t>(rt.threads()));
  waiters_.resize(counters_.size());
  fetched_.resize(counters_.size());
  missed_.resize(counters_.size());
  ops.cache = &view_;
}

Table::~Table() {
  ops_.folding = ops_.fold_only = false;
  ops_.cache = nullptr;
  if (target_.cache_view() == &view_) target_.set_cache_view(nullptr);
  if (postman_) postman_->unsubscribe(target_.array_id());
}

std::int64_t Table::unit_of(std::span<const std::int64_t> index) const {
  if (geo_.dims == 1) return index[0];
  std::int64_t u = 0;
  for (std::size_t d = 0; d + 1 < geo_.dims; ++d) u = u * geo_.shape[d] + index[d];
  return u;
}

std::int64_t Table::unit_offset(std::int64_t unit) const {
  std::int64_t index[kMaxDims];
  first_of(unit, index);
  return geo_.local_offset(index);
}

std::byte* Table::cached_unit(std::int64_t u) const {
  // CacheView counts in elements; unit<std::byte> gives the element offset in bytes' stead.
  const std::byte* first = view_.unit<std::byte>(u);
  if (!first) return nullptr;
  std::byte* block = static_cast<std::byte*>(view_.block_of(detail::t_worker));  // as unit() found it
  return block + static_cast<std::size_t>(first - block) * elem_;
}

std::byte* Table::cached_element(std::int64_t key) const {
  std::byte* unit = cached_unit(key / unit_len_);
  return unit ? unit + static_cast<std::size_t>(key % unit_len_) * elem_ : nullptr;
}

void Table::begin_run(std::span<const std::uint64_t> read_units, std::int64_t clocks) {
  geo_ = Geometry::of(target_, ops_);  // the array may have moved since the last run
  geo_.row_len = std::max<std::int64_t>(unit_len_, 1);  // rows are whole (checked below)
  if (geo_.dims > 1) {
    const auto& box = *geo_.box;
    const std::size_t last = geo_.dims - 1;
    if (!box.empty() && box[last].size() != 0 && box[last].size() != geo_.shape[last])
      throw OptionError(fmt::format("relaxed array {}: its last dimension is partitioned ({}); a relaxed array "
                                    "is cached by whole rows, so partition it along another dimension",
                                    label(), target_.distribution_of().describe()));
  }
  if (!postman_) {
    postman_ = &postman(rt_);
    postman_->subscribe(target_.array_id(), [this](int from, std::span<const std::byte> body) {
      on_message(from, body);
    });
    if (managed_) postman_->set_chore(target_.array_id(), [this] { pump(); });
  }
  {
    std::lock_guard lock(mu_);  // reset before any collective, so no message of this run is lost
    clocks_ = std::max<std::int64_t>(clocks, 1);
    next_apply_ = 0;
    deferred_reads_.clear();
    inbound_.clear();
    arrived_.clear();
    received_.assign(static_cast<std::size_t>(rt_.size()), 0);
    staged_.assign(static_cast<std::size_t>(rt_.size()), Staged{});
    for (auto& w : waiters_) w.ready = false;
    history_.clear();
  }
  own_sent_.clear();
  refreshed_.assign(refolds_ ? static_cast<std::size_t>(units_) : 0, 0);
  ops_.prepare_apply();
  round_ = engine_.reserve_rounds(clocks_);
  split_clock_ = -1;
  lay_out(read_units);
  if (!follow_.empty() && static_cast<std::int64_t>(follow_.size()) != clocks_)
    throw ReplayError(fmt::format("relaxed array {}: the record holds cache versions for {} clock(s), this loop "
                                  "call runs {}",
                                  label(), follow_.size(), clocks_));
  version_ = -1;
  versions_.assign(static_cast<std::size_t>(clocks_), -1);
  if (direct_) {
    view_.block = values();  // the values may have moved since the last run
  } else if (rt_.size() == 1) {
    fill_own_block();
    if (replica_) replica_fill();
  } else {
    // The first fill: every owner sends each reader its block as it is now.
    std::vector<Bytes> blocks(static_cast<std::size_t>(rt_.size()));
    for (int q = 0; q < rt_.size(); ++q) blocks[static_cast<std::size_t>(q)] = snapshot_for(q);
    const auto filled = rt_.comm().alltoallv(blocks);
    for (int o = 0; o < rt_.size(); ++o) store_block(o, filled[static_cast<std::size_t>(o)]);
    if (replica_) replica_fill();
  }
  for (auto& c : counters_) c = Counters{};
  if (logging_) log_.begin(rt_.threads(), managed_);
  if (managed_) outbox_->begin_run(std::chrono::steady_clock::now());
  ops_.folding = consistency_.folds();
  ops_.fold_only = ops_.folding && (direct_ || replica_);
  // A one-rank job without managed communication gets no messages but its own
  // dynamic reads, which wake the Postman when sent: it need not poll (its polls
  // would take a loop thread's share of a core). Nor do replicas, which exchange
  // their changes in a collective and never miss.
  polled_ = (rt_.size() > 1 && !replica_) || managed_;
  if (polled_) postman_->begin_use();
}

void Table::end_run() {
  ops_.folding = ops_.fold_only = false;
  if (managed_) outbox_->end_run(std::chrono::steady_clock::now(), stats_);
  if (replica_) replica_end();
  else {
    std::unique_lock lock(mu_);
    wait_for(lock, fmt::format("relaxed array {}: the owners applying the last clock", label()), [&] {
      if (next_apply_ < clocks_) return false;
      for (std::size_t o = 0; o < received_.size(); ++o)
        if (!reads_from_[o].empty() && received_[o] < clocks_ - 1) return false;
      return true;
    });
    stats_.bytes_sent += server_bytes_;
    stats_.messages_sent += server_messages_;
    server_bytes_ = server_messages_ = 0;
  }
  if (polled_) postman_->end_use();
  for (const auto& c : counters_) {
    stats_.cache_reads += c.cache;
    stats_.dynamic_reads += c.dynamic;
  }
  learn_missed_units();
  rt_.comm().barrier();  // after it, no message of this run is in flight
}

void Table::share_cache(int counter) {
  view_.counter = counter;
  target_.set_cache_view(counter >= 0 && !logging_ ? &view_ : nullptr);  // a logged read goes through read()
}

void Table::send(int dest, const Bytes& message) {
  postman_->send(dest, target_.array_id(), message);
  if (dest != rt_.rank()) {
    stats_.bytes_sent += static_cast<std::int64_t>(message.size());
    ++stats_.messages_sent;
  }
}

void Table::server_send(int dest, const Bytes& message) {
  postman_->send(dest, target_.array_id(), message);
  if (dest != postman_->rank()) {
    std::lock_guard lock(mu_);
    server_bytes_ += static_cast<std::int64_t>(message.size());
    ++server_messages_;
  }
}

void Table::wait_for(std::unique_lock<std::mutex>& lock, const std::string& what, const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(rt_.comm().timeout());
  if (!ready()) postman_->hurry();
  while (!ready()) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (ready()) return;
    lock.unlock();
    postman_->check();
    lock.lock();
    if (std::chrono::steady_clock::now() > deadline) throw TimeoutError(what, rt_.rank(), rt_.comm().timeout());
  }
}

}  // namespace strata::ps
