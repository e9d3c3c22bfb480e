// The reconnaissance pass: runs a loop body once over this rank's iterations and
// records, per static access site, how each array subscript relates to the
// iteration index (analysis::SubscriptFitter). Reads see the real elements; every
// write goes to a private scratch copy, so the pass leaves no trace and several
// threads can run it side by side; accesses to elements held by other ranks get
// zeroed scratch memory.
// Optionally it also records every element each iteration touches, for the exact
// conflict groups of loops with irregular subscripts.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "strata/analysis/conflict_groups.hpp"
#include "strata/analysis/dependence.hpp"
#include "strata/analysis/subscript.hpp"
#include "strata/loop/access.hpp"

namespace strata::loop {

/// Everything recorded about one (array, call site, access mode).
struct SiteRecord {
  detail::ArrayBase* array = nullptr;
  std::uint64_t array_id = 0;
  std::string array_name;
  std::string site;  // "file.cpp:42:17"
  detail::AccessMode mode = detail::AccessMode::read;
  std::vector<analysis::SubscriptFitter> fitters;  // one per array dimension
  std::int64_t count = 0;
  // Fast matching of the call site without building strings.
  const char* file = nullptr;
  std::uint32_t line = 0, column = 0;
};

class Recorder final : public detail::AccessObserver {
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
    scratch_used_ = 0;
  }

  void* on_access(detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) override;

  const std::vector<SiteRecord>& sites() const { return sites_; }
  const std::vector<analysis::ElementAccess>& elements() const { return elements_; }
  std::int64_t accesses() const { return accesses_; }

 private:
  struct Shadow {
    std::uint64_t array_id;
    std::byte* base;               // the array's local storage
    std::vector<std::byte> bytes;  // this recorder's private copy of it
  };
  SiteRecord& site_for(detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode);
  Shadow* shadow_for(detail::ArrayBase& array, bool create);

  int iter_dims_;
  bool record_elements_;
  std::span<const std::int64_t> iteration_;
  std::int64_t ordinal_ = 0;
  std::int64_t accesses_ = 0;
  std::vector<SiteRecord> sites_;
  std::size_t last_site_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> scratch_;
  std::vector<std::size_t> scratch_size_;
  std::size_t scratch_used_ = 0;
  std::vector<analysis::ElementAccess> elements_;
  std::deque<Shadow> shadows_;  // deque: pointers into it stay valid as it grows
};

/// Combines the fits of one site made on different ranks (or threads): equal fits
/// stay, an unseen side defers to the other, whole absorbs point accesses, and any
/// other disagreement is irregular.
analysis::Subscript combine(const analysis::Subscript& a, const analysis::Subscript& b);

}  // namespace strata::loop
