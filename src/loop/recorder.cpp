#include "loop/recorder.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "loop/buffer_base.hpp"
#include "loop/ownership.hpp"
#include "strata/random.hpp"

namespace strata::loop {

Recorder::Recorder(int iter_dims, bool record_elements) : iter_dims_(iter_dims), record_elements_(record_elements) {}

Recorder::~Recorder() = default;

// Bodies cycle through a handful of sites in the same order every iteration, so the
// site after the last one is almost always the one. The check compares the bytes of
// the source_location (one pointer in libstdc++: equal bytes are certainly the same
// site) and the array's address; anything else goes out of line.
[[gnu::always_inline]] inline SiteRecord& Recorder::site_for(strata::detail::ArrayBase& array, const std::source_location& where,
                                                             strata::detail::AccessMode mode) {
  const std::size_t next = last_site_ + 1 < sites_.size() ? last_site_ + 1 : 0;
  if (next < sites_.size()) [[likely]] {
    SiteRecord& s = sites_[next];
    if (s.array == &array && s.mode == mode && strata::detail::identical_site(s.where, where)) [[likely]] {
      last_site_ = next;
      return s;
    }
  }
  return find_site(array, where, mode);
}

SiteRecord& Recorder::find_site(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode) {
  for (std::size_t k = 0; k < sites_.size(); ++k)
    if (sites_[k].array_id == array.array_id() && sites_[k].mode == mode && strata::detail::same_site(sites_[k].where, where)) {
      last_site_ = k;
      return sites_[k];
    }
  SiteRecord s;
  s.array = &array;
  s.array_id = array.array_id();
  s.array_name = strata::detail::array_label(array);
  s.site = strata::detail::site_label(where);
  s.mode = mode;
  s.fitters.assign(static_cast<std::size_t>(array.dimension_count()), analysis::SubscriptFitter(iter_dims_));
  s.where = where;
  // Reads of a relaxed array also collect the units read: the rank's cache.
  if (auto* table = strata::detail::BufferBase::relaxed_table(array.array_id());
      table && mode != strata::detail::AccessMode::buffered) {
    auto it = std::find(read_set_tables_.begin(), read_set_tables_.end(), table);
    if (it == read_set_tables_.end()) {
      read_set_tables_.push_back(table);
      read_sets_.push_back({array.array_id(), std::vector<std::uint64_t>(
                                                  static_cast<std::size_t>((table->unit_count() + 63) / 64), 0)});
      it = read_set_tables_.end() - 1;
    }
    s.read_set = static_cast<int>(it - read_set_tables_.begin());
  }
  sites_.push_back(std::move(s));
  last_site_ = sites_.size() - 1;
  return sites_.back();
}

void* Recorder::on_access(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode,
                          std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) {
  SiteRecord& s = site_for(array, where, mode);
  ++s.count;
  const std::size_t n = s.fitters.size();
  const std::size_t points = whole_last ? n - 1 : n;
  for (std::size_t d = 0; d < points; ++d) s.fitters[d].observe(iteration_, index[d]);
  if (whole_last) s.fitters[n - 1].observe_whole();
  if (s.read_set >= 0) [[unlikely]] {
    const auto k = static_cast<std::size_t>(s.read_set);
    const auto u = static_cast<std::uint64_t>(read_set_tables_[k]->unit_of(index));
    if (u / 64 < read_sets_[k].bits.size()) read_sets_[k].bits[u / 64] |= std::uint64_t{1} << (u % 64);
  }
  if (record_elements_) [[unlikely]] {
    std::uint64_t key = mix64(array.array_id());
    const bool by_row = n > 1 && std::find(row_keyed_.begin(), row_keyed_.end(), array.array_id()) != row_keyed_.end();
    for (std::size_t d = 0; d < (by_row ? n - 1 : n); ++d) key = mix64(key ^ static_cast<std::uint64_t>(index[d]));
    elements_.push_back({ordinal_, key, mode != strata::detail::AccessMode::read});
    // A Buffer's delta needs no unit where the body runs: it is flushed at the owner.
    if (units_of_)
      units_.push_back(mode == strata::detail::AccessMode::buffered ? OwnershipTable::kNoUnit
                                                                     : units_of_->unit_of(array, index, whole_last));
  }
  return scratch_.for_access(real, bytes, mode);
}

analysis::Subscript combine(const analysis::Subscript& a, const analysis::Subscript& b) {
  using K = analysis::Subscript::Kind;
  if (a.kind == K::unseen) return b;
  if (b.kind == K::unseen) return a;
  if (a == b) return a;
  if (a.kind == K::whole || b.kind == K::whole) return analysis::Subscript::whole();
  return analysis::Subscript::irregular();
}

}  // namespace strata::loop
