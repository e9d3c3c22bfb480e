#include "strata/analysis/subscript.hpp"

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::analysis {

std::string iteration_dim_name(int k, std::span<const std::string> names) {
  if (k >= 0 && static_cast<std::size_t>(k) < names.size() &&
      !names[static_cast<std::size_t>(k)].empty())
    return names[static_cast<std::size_t>(k)];
  static constexpr const char* kDefault[] = {"i", "j", "k", "l", "m", "n"};
  if (k >= 0 && k < 6) return kDefault[k];
  return fmt::format("p{}", k);
}

std::string Subscript::describe(std::span<const std::string> names) const {
  switch (kind) {
    case Kind::affine: {
      const std::string dim = iteration_dim_name(iter_dim, names);
      if (offset == 0) return dim;
      return offset > 0 ? fmt::format("{}+{}", dim, offset) : fmt::format("{}{}", dim, offset);
    }
    case Kind::constant:
      return fmt::to_string(offset);
    case Kind::whole:
      return ":";
    case Kind::irregular:
      return "?";
    case Kind::unseen:
      return "unseen";
  }
  return "?";
}

SubscriptFitter::SubscriptFitter(int iter_dims) {
  if (iter_dims < 0 || iter_dims > max_dims)
    throw ShapeError(fmt::format("SubscriptFitter: iteration rank {} is outside 0..{}", iter_dims, max_dims));
  dims_ = static_cast<std::size_t>(iter_dims);
}

void SubscriptFitter::throw_wrong_dims(std::size_t got) const {
  throw ShapeError(fmt::format("SubscriptFitter: iteration index has {} coordinates, the loop has {}", got,
                               dims_));
}

Subscript SubscriptFitter::result() const {
  if (whole_) return Subscript::whole();
  if (points_ == 0) return {};
  // Fitting k with p[k] varying rules out "constant", and fitting k with p[k] fixed
  // implies "constant", so the first fitting k is the preferred form either way.
  for (std::size_t k = 0; k < dims_; ++k)
    if (fits_ >> k & 1u) return Subscript::affine(static_cast<int>(k), offset_[k]);
  if (constant_) return Subscript::constant(value_);
  return Subscript::irregular();
}

}  // namespace strata::analysis
