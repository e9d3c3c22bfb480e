// Giving a container's memory back at once.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace strata::detail {

/// Empties `c` and frees its storage now, where a step is done with a large buffer
/// before the next one allocates. (`c = {}` does not, for a std::vector: it assigns
/// from an empty initializer list, which keeps the capacity.)
template <class Container>
void free_now(Container& c) {
  Container().swap(c);
}

/// Hands the whole pages inside [data, data + bytes) back to the system. Their
/// contents are lost: only for storage about to be freed (its allocator keeps no
/// bookkeeping inside an allocated block, so none is lost).
inline void drop_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (base + page - 1) / page * page, last = (base + bytes) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

/// Appends `from`'s elements to `to` and frees `from`, handing its pages back as the
/// copy passes them: concatenating per-thread outputs of a parse then holds them
/// about once, not twice (with `to` reserved for all of them, no copy of `to` either).
template <class T>
void append_and_free(std::vector<T>& to, std::vector<T>& from) {
  static_assert(std::is_trivially_copyable_v<T>, "pages are dropped under the elements, not destroyed");
  constexpr std::size_t kSlice = (std::size_t{8} << 20) / sizeof(T) + 1;  // about 8 MiB at a time
  to.reserve(to.size() + from.size());
  for (std::size_t at = 0; at < from.size(); at += kSlice) {
    const std::size_t n = std::min(kSlice, from.size() - at);
    to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(at),
              from.begin() + static_cast<std::ptrdiff_t>(at + n));
    drop_pages(from.data() + at, n * sizeof(T));
  }
  free_now(from);
}

}  // namespace strata::detail
