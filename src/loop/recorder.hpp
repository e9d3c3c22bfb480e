// The reconnaissance pass: runs a loop body once over this rank's iterations and
// records, per static access site, how each array subscript relates to the
// iteration index (analysis::SubscriptFitter). Reads see the real elements as they
// were before the loop; every write goes to a scratch copy of its element or row
// that lives until the end of the iteration (later accesses of the same iteration
// see it), so the pass leaves no trace and several threads can run it side by
// side; accesses to elements held by other ranks get zeroed scratch memory.
// Optionally it also records every element each iteration touches, for the exact
// conflict groups of loops with irregular subscripts.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "analysis/conflict_groups.hpp"
#include "strata/analysis/dependence.hpp"
#include "strata/analysis/subscript.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/iteration_scratch.hpp"
#include "loop/relaxed_base.hpp"

namespace strata::loop {

class OwnershipTable;

/// The units (elements, or rows) of a relaxed array this rank's iterations read in
/// the reconnaissance pass, one bit each.
struct ReadSet {
  std::uint64_t array_id = 0;
  std::vector<std::uint64_t> bits;
};

/// Everything recorded about one (array, call site, access mode).
struct SiteRecord {
  strata::detail::ArrayBase* array = nullptr;
  std::uint64_t array_id = 0;
  std::string array_name;
  std::string site;  // "file.cpp:42:17"
  strata::detail::AccessMode mode = strata::detail::AccessMode::read;
  std::vector<analysis::SubscriptFitter> fitters;  // one per array dimension
  std::int64_t count = 0;
  std::source_location where;  // matched without building strings
  int read_set = -1;           // reads of a relaxed array: its entry in Recorder::read_sets()
};

// Cache-line aligned: each thread updates its own recorder at every access, and
// neighbours in a vector must not share a line.
class alignas(64) Recorder final : public strata::detail::AccessObserver {
 public:
  Recorder(int iter_dims, bool record_elements);
  ~Recorder() override;
  Recorder(Recorder&&) = default;
  Recorder& operator=(Recorder&&) = default;

  /// Sets the iteration the next accesses belong to (`ordinal` numbers iterations
  /// for element recording).
  void begin_iteration(std::span<const std::int64_t> index, std::int64_t ordinal) {
    iteration_ = index;
    ordinal_ = ordinal;
    scratch_.begin_iteration();
  }

  void* on_access(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) override;

  /// Element recording keys every access of these arrays by its row (all subscripts
  /// but the last), so a whole-row access and an element of that row meet.
  void key_by_row(std::vector<std::uint64_t> array_ids) { row_keyed_ = std::move(array_ids); }
  /// Element recording also notes, for each access, its unit in `table`
  /// (OwnershipTable::unit_of; kNoUnit for arrays it does not track): split groups
  /// lock them (loop/split_groups.hpp).
  void note_units(const OwnershipTable* table) { units_of_ = table; }
  const std::vector<SiteRecord>& sites() const { return sites_; }
  const std::vector<analysis::ElementAccess>& elements() const { return elements_; }
  /// Parallel to elements() when note_units was given a table, else empty.
  const std::vector<std::uint64_t>& units() const { return units_; }
  /// Room for `accesses` recorded elements (and their units), after note_units.
  void reserve_elements(std::size_t accesses) {
    elements_.reserve(accesses);
    if (units_of_) units_.reserve(accesses);
  }
  std::vector<analysis::ElementAccess> take_elements() { return std::move(elements_); }
  std::vector<std::uint64_t> take_units() { return std::move(units_); }
  /// The units of relaxed arrays this thread's iterations read.
  const std::vector<ReadSet>& read_sets() const { return read_sets_; }
  std::int64_t accesses() const {
    std::int64_t n = 0;
    for (const auto& s : sites_) n += s.count;
    return n;
  }

 private:
  SiteRecord& site_for(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode);
  [[gnu::noinline]] SiteRecord& find_site(strata::detail::ArrayBase& array, const std::source_location& where,
                                          strata::detail::AccessMode mode);

  int iter_dims_;
  bool record_elements_;
  std::span<const std::int64_t> iteration_;
  std::int64_t ordinal_ = 0;
  std::vector<SiteRecord> sites_;
  std::size_t last_site_ = 0;
  IterationScratch scratch_;
  std::vector<analysis::ElementAccess> elements_;
  const OwnershipTable* units_of_ = nullptr;
  std::vector<std::uint64_t> units_;
  std::vector<std::uint64_t> row_keyed_;
  std::vector<ReadSet> read_sets_;
  std::vector<strata::detail::RelaxedBase*> read_set_tables_;  // parallel to read_sets_
};

/// Combines the fits of one site made on different ranks (or threads): equal fits
/// stay, an unseen side defers to the other, whole absorbs point accesses, and any
/// other disagreement is irregular.
analysis::Subscript combine(const analysis::Subscript& a, const analysis::Subscript& b);

}  // namespace strata::loop
