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

/// Hands the whole pages inside [data, data + bytes) back to the system (whole pages
/// only: the pages at either end may hold neighbouring bytes). A file mapping reads
/// them from the file again if touched; anonymous memory loses its contents, so only
/// storage about to be freed is given (its allocator keeps no bookkeeping inside an
/// allocated block).
inline void drop_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (base + page - 1) / page * page, last = (base + bytes) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

/// Calls read(from, to) on consecutive slices of elements [begin, end) of `data`, about
/// `slice_bytes` each, and hands each slice's pages back once read: for storage about
/// to be freed whose elements are converted into other storage, so that the two are
/// not both held whole.
template <class T, class Read>
void read_then_drop(const T* data, std::size_t begin, std::size_t end, Read&& read,
                    std::size_t slice_bytes = std::size_t{8} << 20) {
  static_assert(std::is_trivially_copyable_v<T>, "pages are dropped under the elements, not destroyed");
  const std::size_t slice = std::max<std::size_t>(1, slice_bytes / sizeof(T));
  for (std::size_t from = begin; from < end; from += slice) {
    const std::size_t to = std::min(end, from + slice);
    read(from, to);
    drop_pages(data + from, (to - from) * sizeof(T));
  }
}

/// Appends `from`'s elements to `to` and frees `from`, handing its pages back as the
/// copy passes them: concatenating per-thread outputs of a parse then holds them
/// about once, not twice (with `to` reserved for all of them, no copy of `to` either).
template <class T>
void append_and_free(std::vector<T>& to, std::vector<T>& from) {
  to.reserve(to.size() + from.size());
  read_then_drop(from.data(), 0, from.size(), [&](std::size_t begin, std::size_t end) {
    to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(begin), from.begin() + static_cast<std::ptrdiff_t>(end));
  });
  free_now(from);
}

}  // namespace strata::detail
