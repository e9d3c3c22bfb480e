// Choosing how to run a parallel_for from its dependence vectors (Orion sec. 4.3).
//
// Strategies from strongest (most parallel, least synchronisation) to weakest:
// 1D, 2D, skewed 2D, task groups, serial. The chooser takes the strongest legal one
// and records, for explain, why each stronger one was rejected.
//
// What each strategy guarantees, and so what it requires of every vector d:
//  * one_d on k: iterations with different p[k] never conflict; d[k] == 0.
//  * two_d on (space s, time t), unordered loop: blocks differing in both s and t
//    run concurrently (rotation, Orion's Fig. 7c); d[s] == 0 or d[t] == 0.
//  * two_d, ordered loop: a wavefront; block (a, b) starts after (a-1, b) and
//    (a, b-1) finished, i.e. after every block that is <= in both coordinates, and
//    runs its iterations in serial order. That is correct exactly when every real
//    dependence points to a block >= in both coordinates: d[s] >= 0 and d[t] >= 0.
//    With the sign convention of DependenceVector, a component qualifies when it is a
//    zero, a non-negative number of a vector whose leading component is a number, or
//    the leading "*" itself (so (0, *) and (*, 0) both qualify, (1, *) does not).
//  * two_d_skewed with T on (s, t): the same wavefront over the transformed
//    coordinates (s', t') = T (s, t); requires T d >= 0 in both new coordinates. It is
//    also used for unordered loops whose vectors need a wavefront (T may then be the
//    identity): an ordered schedule is always a valid schedule for an unordered loop.
//  * groups: exact connected components of the recorded conflicts (STRADS-AP).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/analysis/dependence.hpp"

namespace strata::analysis {

/// How a parallel_for runs.
enum class Strategy {
  serial,         ///< one worker, serial order
  one_d,          ///< partition the iteration space along one dimension, no communication inside
  two_d,          ///< blocks over a (space, time) pair: rotation (unordered) or wavefront (ordered)
  two_d_skewed,   ///< wavefront over a unimodularly transformed (space, time) pair
  groups,         ///< conflict-free task groups from the recorded accesses
  data_parallel,  ///< ignore dependences (parameter server path); only when forced
};

/// "serial", "one_d", "two_d", "two_d_skewed", "groups", "data_parallel".
std::string to_string(Strategy s);
/// Parses to_string's names (also "1d", "2d", "2d_skewed"); "auto" gives nullopt.
/// Throws OptionError naming the valid values for anything else.
std::optional<Strategy> parse_strategy(std::string_view name);

/// The chosen strategy and its parameters.
struct StrategyChoice {
  Strategy strategy = Strategy::serial;
  int space_dim = -1;  ///< one_d: the partitioned dimension; two_d*: the space dimension
  int time_dim = -1;   ///< two_d*: the time dimension
  /// two_d_skewed: unimodular T over the (space_dim, time_dim) plane, new = T * old.
  std::array<std::array<std::int64_t, 2>, 2> skew{{{1, 0}, {0, 1}}};
  /// Why each stronger strategy was rejected, one human-readable line each.
  std::vector<std::string> reasons;
};

/// Everything the chooser looks at.
struct StrategyInput {
  int iter_dims = 1;
  bool ordered = false;
  /// has_irregular(): some conflicting pair has an irregular subscript.
  bool irregular = false;
  /// The loop writes through Buffers (already excluded from `vectors`): a loop that
  /// qualifies for 1-D is then named data-parallel.
  bool has_buffered_writes = false;
  std::vector<DependenceVector> vectors;
  /// Iteration space extents (empty: unknown). Dimensions of extent <= 1 give no
  /// parallelism and are tried last.
  std::vector<std::int64_t> extents;
  /// Elements communicated if dimension k is the 1D / space dimension (smaller is
  /// better); empty: prefer lower dimensions.
  std::vector<double> traffic_per_dim;
  /// Names of the iteration dimensions for messages (empty: "i", "j", ...).
  std::vector<std::string> dim_names;
  /// A strategy the user forced; choose_strategy validates it and throws OptionError
  /// naming an offending vector if it would break a dependence.
  std::optional<Strategy> forced;
};

/// The strongest legal strategy for `in` (or the forced one, validated), with its
/// dimensions ranked by traffic_per_dim. Throws ShapeError when the sizes of vectors,
/// extents or traffic_per_dim disagree with iter_dims.
StrategyChoice choose_strategy(const StrategyInput& in);

}  // namespace strata::analysis
