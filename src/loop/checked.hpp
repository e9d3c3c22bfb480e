// Checked execution: every access a loop body makes is compared with the plan.
//
// Two checks, either or both:
// * bounds (checked mode): an access at a site the reconnaissance pass never saw, or
//   to an element outside the running worker's partition, stops the run with an
//   error naming the site, the array and the subscript. Irregular accesses never run
//   silently in parallel.
// * fits (speculation): when a plan was built from a sampled reconnaissance, its
//   first run checks every subscript against the fitted form the plan relies on
//   (p_k + c, constant, whole). The first access that does not fit, or comes from an
//   unknown site, throws SpeculationFailed *before* it touches memory, so every
//   access that did run obeyed the plan and the run can be undone and re-planned.
// * claims (re-validation of groups plans, loop/ownership.hpp): an access that
//   conflicts with another worker's accesses in this run throws SpeculationFailed
//   before it touches memory, the same way.
#pragma once

#include <cstdint>
#include <cstring>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "loop/ownership.hpp"
#include "loop/plan.hpp"
#include "loop/split_groups.hpp"

namespace strata::loop {

/// A speculative plan met an access it does not cover (internal: parallel_for
/// catches it, undoes the run and plans again from a full reconnaissance).
class SpeculationFailed : public Error {
 public:
  using Error::Error;
};

/// "W[3, :]": how messages show an access.
std::string shown(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last);

/// Throws SpeculationFailed for an access whose claim in `table` (loop/ownership.hpp)
/// was refused, naming the access, why, its site when known ("" otherwise) and the
/// iteration.
[[noreturn, gnu::cold, gnu::noinline]] void claim_refused(const OwnershipTable& table,
                                                          const strata::detail::ArrayBase& array,
                                                          std::span<const std::int64_t> index, bool whole_last,
                                                          bool write, std::span<const std::int64_t> iteration,
                                                          const std::string& site);

class CheckedObserver final : public strata::detail::AccessObserver {
 public:
  CheckedObserver(const Plan& plan, bool check_bounds, bool check_fits)
      : plan_(plan), check_bounds_(check_bounds), check_fits_(check_fits) {}

  /// The partition the current thread works in: rows [space_lo, space_hi) of the space
  /// dimension and, for 2-D plans, [time_lo, time_hi) of the time dimension.
  void set_bounds(std::int64_t space_lo, std::int64_t space_hi, std::int64_t time_lo, std::int64_t time_hi) {
    space_lo_ = space_lo, space_hi_ = space_hi, time_lo_ = time_lo, time_hi_ = time_hi;
  }
  /// The iteration the next accesses belong to (needed by the fit check).
  void begin_iteration(std::span<const std::int64_t> index) { iteration_ = index; }
  /// Re-validating a groups plan: every access also claims its element in `table`
  /// for `worker`, and a conflicting claim throws SpeculationFailed before the access.
  void watch(OwnershipTable* table, int worker) { owners_ = table, worker_ = worker; }
  /// Split groups: a claim refused on a lockable unit tries its lock in `locks` (null: none).
  void lock_with(SplitLocks* locks) { locks_ = locks; }
  /// Probing whether a cached plan fits a new call (loop/plan_probe.hpp). Subscripts
  /// may differ from the plan's where nothing rests on them: Buffer writes (deltas
  /// conflict with nothing) and reads of arrays the loop only reads that every
  /// worker holds whole during a run (placed local or replicated, outside spread
  /// plans, whose ranks fetch only the rows they were seen to read). A failure names
  /// the plan, not a sample, as what the access does not fit.
  void as_probe() { probe_ = true; }
  /// Whether the access that failed the fit check came from a site the plan never saw.
  bool failed_on_unseen_site() const { return unseen_site_; }

  // Kept small: during a speculative run it is called for every access, so all
  // message building is out of line.
  void* on_access(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* /*real*/,
                  std::size_t /*bytes*/) override {
    const KnownSite* planned = planned_site(array, where, mode);
    if (check_fits_ && (!planned || !fits(*planned, index, whole_last))) [[unlikely]]
      fit_failed(array, where, index, whole_last, planned != nullptr);
    if (owners_ && mode != strata::detail::AccessMode::buffered &&
        !owners_->claim(array, index, whole_last, mode != strata::detail::AccessMode::read, worker_)) [[unlikely]]
      if (!locks_ || !locks_->lock_extra(array, index, whole_last))
        claim_refused(*owners_, array, index, whole_last, mode != strata::detail::AccessMode::read, iteration_,
                      strata::detail::site_label(where));
    if (check_bounds_) check_planned(planned, array, where, mode, index, whole_last);
    return nullptr;
  }

 private:
  // One array dimension's planned subscript, in the form the fit check needs.
  struct DimCheck {
    enum Kind : std::uint8_t { any, affine, constant, never } kind = never;
    std::uint8_t iter_dim = 0;
    std::int64_t offset = 0;
  };
  struct KnownSite {
    const strata::detail::ArrayBase* array;
    std::source_location where;
    strata::detail::AccessMode mode;
    std::size_t dims;
    DimCheck check[analysis::SubscriptFitter::max_dims];
  };
  // The plan's record of (array, call site, mode), or nullptr. Bodies visit their
  // sites in the same order every iteration, so the one after the last is tried
  // first; the rest is cached per call site so the common case formats no strings.
  const KnownSite* planned_site(const strata::detail::ArrayBase& array, const std::source_location& where,
                                strata::detail::AccessMode mode) {
    const std::size_t next = last_ + 1 < known_.size() ? last_ + 1 : 0;
    if (next < known_.size()) [[likely]] {
      const KnownSite& k = known_[next];
      if (k.array == &array && k.mode == mode && strata::detail::identical_site(k.where, where)) [[likely]] {
        last_ = next;
        return &k;
      }
    }
    return find_site(array, where, mode);
  }
  const KnownSite* find_site(const strata::detail::ArrayBase& array, const std::source_location& where,
                             strata::detail::AccessMode mode);
  // Probing: whether the site's subscripts may be anything (as_probe).
  bool any_subscript_in_probe(std::uint64_t array_id, strata::detail::AccessMode mode) const;
  // Whether the access matches the subscripts the plan was built from.
  bool fits(const KnownSite& site, std::span<const std::int64_t> index, bool whole_last) const {
    if (index.size() != site.dims) return false;
    for (std::size_t d = 0; d < site.dims; ++d) {
      const DimCheck& c = site.check[d];
      if (c.kind == DimCheck::any) continue;
      if (whole_last && d + 1 == site.dims) return false;  // a row where points were planned
      const std::int64_t want = c.kind == DimCheck::affine ? iteration_[c.iter_dim] + c.offset : c.offset;
      if (c.kind == DimCheck::never || index[d] != want) return false;
    }
    return true;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fit_failed(const strata::detail::ArrayBase& array,
                                                         const std::source_location& where,
                                                         std::span<const std::int64_t> index, bool whole_last,
                                                         bool site_known) const;
  // Checked mode: the site must be planned and the access inside the partition.
  void check_planned(const KnownSite* planned, const strata::detail::ArrayBase& array, const std::source_location& where,
                     strata::detail::AccessMode mode, std::span<const std::int64_t> index, bool whole_last) const;

  const Plan& plan_;
  bool check_bounds_, check_fits_;
  bool probe_ = false;
  mutable bool unseen_site_ = false;  // set by fit_failed
  std::vector<KnownSite> known_;
  std::size_t last_ = 0;
  std::span<const std::int64_t> iteration_;
  OwnershipTable* owners_ = nullptr;
  SplitLocks* locks_ = nullptr;
  int worker_ = 0;
  std::int64_t space_lo_ = 0, space_hi_ = 0, time_lo_ = 0, time_hi_ = 0;
};

}  // namespace strata::loop
