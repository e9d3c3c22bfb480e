// A relaxed table's managed communication (managed_outbox.hpp): the pump, every turn
// of the Postman's loop while a run is on.
#include <chrono>
#include <cstring>
#include <optional>

#include "ps/ps_internal.hpp"

namespace strata::ps {

// Cached values rank the deltas, so the cache must hold still: under mu_.
void Table::pump() {
  std::lock_guard lock(mu_);
  outbox_->pump(
      std::chrono::steady_clock::now(), postman_->rank(),
      [&](std::int64_t k) -> std::optional<double> {
        const std::byte* v = cached_element(k);
        if (!v) return std::nullopt;
        double x;
        ops_.to_doubles(v, elem_, 1, &x);
        return x;
      },
      [&](std::int64_t k) { return geo_.owner_of(k); },
      [&](int owner, std::int64_t clock, const Bytes& records) {
        Bytes b(sizeof(Header) + records.size());
        const Header h{kEarly, 0, clock, 0};
        std::memcpy(b.data(), &h, sizeof h);
        if (!records.empty()) std::memcpy(b.data() + sizeof h, records.data(), records.size());
        postman_->send(owner, target_.array_id(), b);
        return b.size();
      });
}

}  // namespace strata::ps
