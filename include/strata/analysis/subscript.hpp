// Online fitting of array subscripts observed during the reconnaissance pass.
//
// Strata has no compiler front end, so it cannot read a subscript expression like
// Orion does. Instead every access site reports, per array dimension, the iteration
// index p and the subscript it used; a SubscriptFitter decides whether all those
// observations agree with one simple form (p[k] + c, a constant, a whole row) that
// the dependence analysis understands. Anything else is "irregular" and is handled
// by exact conflict groups instead of dependence vectors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace strata::analysis {

/// The fitted form of one array dimension's subscript at one access site.
struct Subscript {
  enum class Kind {
    affine,     ///< subscript == p[iter_dim] + offset for every observation
    constant,   ///< subscript == offset for every observation
    whole,      ///< the access covered the whole dimension (a row or slice access)
    irregular,  ///< none of the above: data-dependent or non-affine
    unseen,     ///< no observation at all
  };
  Kind kind = Kind::unseen;
  /// affine: the iteration dimension the subscript follows.
  int iter_dim = -1;
  /// affine: the offset added to p[iter_dim]; constant: the value.
  std::int64_t offset = 0;

  static Subscript affine(int iter_dim, std::int64_t offset) {
    return {Kind::affine, iter_dim, offset};
  }
  static Subscript constant(std::int64_t value) { return {Kind::constant, -1, value}; }
  static Subscript whole() { return {Kind::whole, -1, 0}; }
  static Subscript irregular() { return {Kind::irregular, -1, 0}; }

  /// "i+1", "j", "j-2", "3", ":" (whole), "?" (irregular) or "unseen". `names` names the
  /// iteration dimensions; missing names fall back to iteration_dim_name's defaults.
  std::string describe(std::span<const std::string> names = {}) const;
  bool operator==(const Subscript&) const = default;
};

/// The name of iteration dimension k for messages: names[k] when given, else "i", "j",
/// "k", "l", "m", "n" for the first six dimensions and "p<k>" beyond.
std::string iteration_dim_name(int k, std::span<const std::string> names = {});

/// Fits one (access site, array dimension) subscript from observations fed one at a
/// time. Each observation costs O(iter_dims) and allocates nothing.
///
/// Preference when several forms fit every observation: affine on the lowest k that
/// fits, else constant, else irregular; a whole-dimension access, alone or mixed with
/// point accesses, makes the result whole; no observation at all is unseen.
///
/// Affine beats constant only in an ambiguous case: if p[k] took two values, a fit on
/// k rules out a constant subscript. When p[k] never varied (a single observation, or
/// an iteration space of extent 1 along k), "p[k]+c" and "constant" describe the
/// observations equally well; the affine form is chosen because it generalises to the
/// rest of dimension k and gives the dependence test a distance rather than "no
/// constraint".
class SubscriptFitter {
 public:
  /// Iteration spaces and arrays have at most this many dimensions.
  static constexpr int max_dims = 4;
  explicit SubscriptFitter(int iter_dims);

  /// One point access: iteration index `iteration` (size iter_dims) used `subscript`.
  /// Inline and branch-light: the reconnaissance pass calls it for every subscript of
  /// every access.
  void observe(std::span<const std::int64_t> iteration, std::int64_t subscript) {
    if (iteration.size() != dims_) [[unlikely]]
      throw_wrong_dims(iteration.size());
    if (points_ == 0) [[unlikely]] {
      value_ = subscript;
      for (std::size_t k = 0; k < dims_; ++k) offset_[k] = subscript - iteration[k];
    }
    constant_ &= subscript == value_;
    unsigned still = 0;
    for (std::size_t k = 0; k < dims_; ++k) still |= unsigned{subscript - iteration[k] == offset_[k]} << k;
    fits_ &= still;
    ++points_;
  }
  /// One access that covered the whole dimension.
  void observe_whole() { whole_ = true; }
  /// The best form for everything observed so far.
  Subscript result() const;

 private:
  [[noreturn]] void throw_wrong_dims(std::size_t got) const;
  std::int64_t points_ = 0;
  std::int64_t value_ = 0;                    // the subscript at the first observation
  std::int64_t offset_[max_dims] = {};        // subscript - p[k] at the first observation
  std::size_t dims_ = 0;                      // iteration dimensions
  unsigned fits_ = (1u << max_dims) - 1;      // bit k: subscript - p[k] was offset_[k] every time
  bool constant_ = true;                      // the subscript was value_ every time
  bool whole_ = false;
};

}  // namespace strata::analysis
