#include "strata/loop/recorder.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "strata/random.hpp"

namespace strata::loop {

Recorder::Recorder(int iter_dims, bool record_elements) : iter_dims_(iter_dims), record_elements_(record_elements) {}

Recorder::~Recorder() = default;

SiteRecord& Recorder::site_for(detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode) {
  // Bodies cycle through a handful of sites: try the last one, then scan.
  auto matches = [&](const SiteRecord& s) {
    return s.line == where.line() && s.column == where.column() && s.array_id == array.array_id() &&
           s.mode == mode && (s.file == where.file_name() || std::strcmp(s.file, where.file_name()) == 0);
  };
  if (last_site_ < sites_.size() && matches(sites_[last_site_])) return sites_[last_site_];
  for (std::size_t k = 0; k < sites_.size(); ++k)
    if (matches(sites_[k])) {
      last_site_ = k;
      return sites_[k];
    }
  SiteRecord s;
  s.array = &array;
  s.array_id = array.array_id();
  s.array_name = array.name().empty() ? fmt::format("array#{}", array.array_id()) : array.name();
  s.site = detail::site_label(where);
  s.mode = mode;
  s.fitters.assign(static_cast<std::size_t>(array.rank_of_array()), analysis::SubscriptFitter(iter_dims_));
  s.file = where.file_name();
  s.line = where.line();
  s.column = where.column();
  sites_.push_back(std::move(s));
  last_site_ = sites_.size() - 1;
  return sites_.back();
}

void* Recorder::on_access(detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode,
                          std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) {
  ++accesses_;
  SiteRecord& s = site_for(array, where, mode);
  ++s.count;
  const std::size_t n = s.fitters.size();
  for (std::size_t d = 0; d < n; ++d) {
    if (whole_last && d + 1 == n) s.fitters[d].observe_whole();
    else s.fitters[d].observe(iteration_, index[d]);
  }
  if (record_elements_) {
    std::uint64_t key = mix64(array.array_id());
    for (std::size_t d = 0; d < n; ++d) key = mix64(key ^ static_cast<std::uint64_t>(index[d]));
    elements_.push_back({ordinal_, key, mode != detail::AccessMode::read});
  }
  // Reads see the real element; writes go to a private copy, so the pass changes
  // nothing and threads running it side by side never write shared memory. Arrays
  // of moderate size get a whole private shadow on their first write (one copy per
  // pass instead of one per access); larger ones get a copy of each element written.
  if (real) {
    Shadow* sh = shadow_for(array, mode != detail::AccessMode::read);
    if (sh) return sh->bytes.data() + (static_cast<std::byte*>(real) - sh->base);
    if (mode == detail::AccessMode::read) return nullptr;
  }
  // Hand out scratch that lives until the next iteration: a copy of the element, or
  // zeros when it is held by another rank.
  if (scratch_used_ == scratch_.size()) {
    scratch_.push_back(nullptr);
    scratch_size_.push_back(0);
  }
  auto& buf = scratch_[scratch_used_];
  auto& cap = scratch_size_[scratch_used_];
  if (cap < bytes) {
    buf = std::make_unique<std::byte[]>(bytes);
    cap = bytes;
  }
  if (real) std::memcpy(buf.get(), real, bytes);
  else std::memset(buf.get(), 0, bytes);
  ++scratch_used_;
  return buf.get();
}

Recorder::Shadow* Recorder::shadow_for(detail::ArrayBase& array, bool create) {
  for (auto& sh : shadows_)
    if (sh.array_id == array.array_id()) return &sh;
  if (!create) return nullptr;
  constexpr std::size_t kMaxShadow = std::size_t{256} << 20;
  const auto bytes = array.local_bytes();
  if (bytes.size() > kMaxShadow) return nullptr;
  shadows_.push_back({array.array_id(), bytes.data(), std::vector<std::byte>(bytes.begin(), bytes.end())});
  return &shadows_.back();
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
