// Giving a container's memory back at once.
#pragma once

namespace strata::detail {

/// Empties `c` and frees its storage now, where a step is done with a large buffer
/// before the next one allocates. (`c = {}` does not, for a std::vector: it assigns
/// from an empty initializer list, which keeps the capacity.)
template <class Container>
void free_now(Container& c) {
  Container().swap(c);
}

}  // namespace strata::detail
