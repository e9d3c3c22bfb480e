#include "loop/relaxed_run.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "strata/detail/cache_view.hpp"
#include "strata/error.hpp"
#include "loop/buffer_base.hpp"
#include "strata/loop/call_hooks.hpp"

namespace strata::loop::detail {

void* RelaxedReads::on_access(strata::detail::ArrayBase& array, const std::source_location& where,
                              strata::detail::AccessMode mode, std::span<const std::int64_t> index, bool whole_last,
                              void* real, std::size_t bytes) {
  void* alt = inner_ ? inner_->on_access(array, where, mode, index, whole_last, real, bytes) : nullptr;
  for (auto* t : tables_)
    if (t->array_id() == array.array_id()) return t->read(index, whole_last, mode, thread_);
  return alt;
}

RelaxedRun::RelaxedRun(const Plan& plan) {
  for (const auto& role : plan.roles) {
    if (role.placement != Placement::cached) continue;
    auto* t = strata::detail::BufferBase::relaxed_table(role.array_id);
    STRATA_CHECK(t != nullptr, "a loop planned with a relaxed array whose Buffer no longer exists");
    if (!tables_.empty() && t->consistency().clock_every != clock_every_)
      throw OptionError(fmt::format("loop at {}: its relaxed arrays clock at different rates ({} and {} iterations); "
                                    "give their Buffers the same clock_every",
                                    plan.loop_site, clock_every_, t->consistency().clock_every));
    clock_every_ = t->consistency().clock_every;
    tables_.push_back(t);
    if (t->managed()) managed_.push_back(t);
    if (t->splits_tick()) splitting_.push_back(t);
  }
}

RelaxedRun::~RelaxedRun() {
  for (auto* t : tables_) t->share_cache(-1);
}

void RelaxedRun::share_caches() {
  shared_ = std::min<std::size_t>(tables_.size(), strata::detail::kCountedViews);
  for (std::size_t k = 0; k < shared_; ++k) tables_[k]->share_cache(static_cast<int>(k));
}

void RelaxedRun::count_cache_reads(int th) const {
  for (std::size_t k = 0; k < shared_; ++k)
    tables_[k]->count_cache_reads(th, std::exchange(strata::detail::t_cache_reads[k], 0));
}

void RelaxedRun::begin(Runtime& rt, const Plan& plan, std::int64_t most) {
  clocks_ = clock_every_ > 0 ? std::max<std::int64_t>(1, (most + clock_every_ - 1) / clock_every_) : 1;
  clocks_ = rt.comm().allreduce(clocks_, ReduceOp::max);
  clock_ = 0;
  call_hooks(rt).before_relaxed_run(tables_, plan.loop_site);
  for (auto* t : tables_) {
    auto it = std::find_if(plan.read_sets.begin(), plan.read_sets.end(),
                           [&](const ReadSet& r) { return r.array_id == t->array_id(); });
    t->begin_run(it == plan.read_sets.end() ? std::span<const std::uint64_t>() : std::span(it->bits), clocks_);
  }
  observers_.clear();
}

void RelaxedRun::make_observer(int th, strata::detail::AccessObserver* inner) {
  if (observers_.size() <= static_cast<std::size_t>(th)) observers_.resize(static_cast<std::size_t>(th) + 1);
  observers_[static_cast<std::size_t>(th)] = std::make_unique<RelaxedReads>(tables_, inner, th);
}

void RelaxedRun::keep(std::exception_ptr e) noexcept {
  std::lock_guard lock(error_mu_);
  if (!error_) error_ = std::move(e);
  failed_.store(true, std::memory_order_relaxed);
}

void RelaxedRun::prepare_tick(int threads) noexcept {
  if (failed()) return;
  try {
    for (auto* t : splitting_) t->prepare_tick(clock_, threads);
  } catch (...) {
    keep(std::current_exception());
  }
}

void RelaxedRun::tick_part(int th, int threads) noexcept {
  if (failed()) return;
  try {
    for (auto* t : splitting_) t->tick_part(clock_, th, threads);
  } catch (...) {
    keep(std::current_exception());
  }
}

void RelaxedRun::tick() noexcept {
  if (!failed()) {
    try {
      for (auto* t : tables_) t->tick(clock_);
    } catch (...) {
      keep(std::current_exception());
    }
  }
  ++clock_;
}

void RelaxedRun::end() {
  for (auto* t : tables_) t->share_cache(-1);
  shared_ = 0;
  if (error_) std::rethrow_exception(error_);
  for (auto* t : tables_) t->end_run();
}

}  // namespace strata::loop::detail
