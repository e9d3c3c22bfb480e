// Dependence vectors between the iterations of a parallel_for, after Orion's
// Algorithm 2 (EuroSys'19, sec. 4.2), computed from fitted subscripts.
//
// A dependence vector d says: iteration p2 may depend on iteration p1 when
// p2 - p1 matches d, where a finite component must match exactly and "*" matches any
// integer. Every vector is lexicographically positive (p1 runs first in the serial
// loop), so the zero vector, the same iteration, is never a loop-carried dependence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/analysis/subscript.hpp"

namespace strata::analysis {

/// How an access site touches its array. A site that both reads and writes the
/// element it names (a mutable row view, `A[i] += x`) is read_write: it conflicts with
/// itself in another iteration even in an unordered loop, where write/write pairs are
/// ignored.
enum class AccessKind { read, write, read_write };

/// One static access site on one array: Orion's "DistArray reference".
struct Reference {
  int array = 0;           ///< array id; only references with equal ids are compared
  std::string array_name;  ///< for messages and explain
  std::string site;        ///< source location, "file.cpp:42:17"
  AccessKind kind = AccessKind::read;
  std::vector<Subscript> subs;  ///< one fitted subscript per array dimension
  bool buffered = false;        ///< writes go through a Buffer: they never create dependences

  bool reads() const { return kind != AccessKind::write; }
  bool writes() const { return kind != AccessKind::read && !buffered; }
};

/// One component of a dependence vector: a number, or "*" (any integer).
struct Distance {
  bool infinite = true;
  std::int64_t value = 0;  ///< meaningful when !infinite

  static Distance any() { return {}; }
  static Distance exactly(std::int64_t v) { return {false, v}; }
  bool is_zero() const { return !infinite && value == 0; }
  bool operator==(const Distance&) const = default;
};

/// A dependence vector over the iteration dimensions, with the pair of references
/// (indices into the input) that first produced it.
///
/// Sign convention for "*". Orion distinguishes +inf and -inf; Strata keeps a single
/// "*" and records what normalisation can prove instead:
///  * if the first component that is not a finite zero is a positive number, the
///    vector is exact: every listed sign is the sign of the real distance;
///  * if that first component is "*" (the "leading *"), only distances with a
///    non-negative value there are real dependences, so the leading "*" means "any
///    value >= 0", but every later component, finite or not, is known only up to sign
///    (the two iterations can meet in either order). Later finite components are
///    stored with the first non-zero one positive so equal sets compare equal.
/// component_sign() exposes this to the strategy chooser.
struct DependenceVector {
  std::vector<Distance> d;
  int ref_a = -1, ref_b = -1;
  /// Where the vector comes from, for messages: "W (write at a.cpp:12, read at a.cpp:10)".
  std::string source;

  /// "(0, *)", "(1, -1)".
  std::string describe() const;
  /// The index of the first component that is not a finite zero (d.size() if none).
  std::size_t leading() const;

  /// What the vector guarantees about the sign of component k over all the real
  /// dependences it stands for.
  enum class Sign {
    zero,          ///< always exactly 0
    non_negative,  ///< a known number >= 0, or the leading "*" (any value >= 0)
    negative,      ///< a known number < 0
    unknown,       ///< a non-leading "*", or a non-zero number after a leading "*"
  };
  Sign component_sign(std::size_t k) const;
};

/// The dependence vectors of a loop with `iter_dims` iteration dimensions whose body
/// makes the accesses `refs`, each pair of references on the same array (a reference
/// paired with itself too: the same site in two iterations) tested as in Orion:
///  * read/read pairs, pairs involving a buffered write only, and, when !ordered,
///    write/write pairs are skipped;
///  * per array dimension, two affine subscripts on the same iteration dimension k fix
///    d[k] = offset_a - offset_b (up to the sign fixed by normalisation); two such
///    constraints that disagree, or two different constants, prove independence;
///    every other combination (whole, equal constants, affine on different dimensions,
///    affine against constant, irregular, unseen) leaves the components "*";
///  * vectors are made lexicographically positive, all-zero vectors dropped (same
///    iteration) and duplicates removed (the first pair that produced a vector names it).
/// Throws ShapeError when two references on one array disagree on its rank or an
/// affine subscript names an iteration dimension outside [0, iter_dims).
std::vector<DependenceVector> dependence_vectors(const std::vector<Reference>& refs, int iter_dims,
                                                 bool ordered);

/// True when an irregular (or unseen) subscript takes part in some pair that
/// dependence_vectors could not prove independent. The vectors stay sound ("*" where
/// the subscript is irregular), but the planner should then consider exact conflict
/// groups. Irregular reads of arrays nobody writes do not count.
bool has_irregular(const std::vector<Reference>& refs, int iter_dims, bool ordered);

}  // namespace strata::analysis
