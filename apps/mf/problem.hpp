// Matrix factorisation's data, shared by the serial program and its Strata twin:
// ratings split into training and held-out sets, a generator with a planted
// low-rank model, a loader for "user item rating" files, and the quality measures.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/index.hpp"

namespace strata {
class Runtime;
class ThreadPool;
}

namespace strata::apps::mf {

/// The most users or items a problem may have: a rating keeps its model rows as 32-bit
/// numbers (12 bytes a rating, as LIBMF's), which generate and load check.
inline constexpr std::int64_t kMaxRows = INT32_MAX;

struct Rating {
  std::int32_t user = 0, item = 0;  ///< model rows (dense ids below kMaxRows)
  float value = 0;
};

struct Problem {
  std::int64_t users = 0, items = 0;
  std::vector<Rating> train;  ///< in the order the serial program visits them
  std::vector<Rating> test;   ///< held out: never trained on
  /// train and test hold this rank's share of the ratings only (load_share): the
  /// Strata program takes every rank's share; the serial program needs them all.
  bool shared = false;
  /// Training and held-out ratings over all ranks (their sizes when not shared).
  std::int64_t train_count = 0, test_count = 0;
  std::string source;         ///< one line: where the ratings came from
  /// A rating file's distinct user and item ids, increasing: row r of the model is
  /// user user_ids[r]. Empty when the ids are the rows (generated data).
  std::vector<std::int64_t> user_ids, item_ids;
};

/// What --synthetic takes.
struct SyntheticSpec {
  std::int64_t users = 50'000, items = 5'000, ratings = 1'000'000;
  int rank = 5;  ///< rank of the planted model
};

/// Ratings of a planted model r = 3.5 + b_user + b_item + <p_user, q_item> + noise
/// (rank `spec.rank`), rounded to half stars in [0.5, 5]; distinct (user, item)
/// pairs, item popularity Zipf(0.8) with popular items scattered over the ids.
/// Every rank generates the same ratings from the seed. A fraction `holdout` of
/// them, chosen by a hash of the pair, is held out.
Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed);

/// Fold `f` of `folds` for cross-validation: every rating of `all` (training and
/// held out) whose pair hashes to fold f is held out, the rest train. The folds
/// partition the ratings, the same for any order and any number of ranks.
Problem fold(const Problem& all, int f, int folds, std::uint64_t seed);

/// Reads a rating file with the library's parser strata::parse::ratings (parsers.hpp:
/// "user item rating [timestamp]" lines as MovieLens ships them, a header line of
/// column names skipped), in parallel on every rank and thread; every rank ends with
/// the whole problem. Ids may be any non-negative integers below 10^18: they are
/// renumbered densely in increasing order. A pair rated twice is an error naming both
/// lines. For the serial program (`order` serial) the ratings are shuffled with the
/// seed, in file order before the shuffle, so its order is the same for any number of
/// ranks and threads; the Strata program keeps them in file order (its plans visit
/// ratings in an order of their own, and shuffling 10M ratings cost 0.2 s of
/// start-up). The held-out set does not depend on the order (a hash of the pair).
/// ParseError names the file and line; IoError when the file cannot be mapped (it
/// must be a regular file). Collective.
enum class Order { serial, any };
Problem load(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed, Order order = Order::serial);

/// load() for the Strata program on several ranks (load_share.cpp): each rank keeps
/// the ratings it parsed (its part of the file), so no rank ever holds the whole
/// file. Ids are renumbered as load() does, through every rank's distinct ids; a pair
/// rated twice is found where its user's ratings meet, and raises load()'s error on
/// every rank; the held-out set is chosen by the same hash. The union of the shares
/// is load()'s problem, in another order (the Strata program's plans visit ratings
/// in an order of their own). Collective.
Problem load_share(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed);

/// Moves the ratings of `all` a hash of the pair holds out (a fraction `holdout`) to
/// p.test and the others to p.train, in their order; sets the counts to the sizes.
/// The hashes are computed on `pool`'s threads where one is given.
void split(Problem& p, std::vector<Rating> all, double holdout, std::uint64_t seed, ThreadPool* pool = nullptr);
/// The parsed entries as ratings (ids already renumbered below 2^31), in their order,
/// converted on the runtime's threads; `entries` is emptied and freed, its pages
/// handed back as the conversion passes them.
std::vector<Rating> to_ratings(Runtime& rt, std::vector<Entry<float, 2>>& entries);
/// Dense ids in increasing order of the original ids of each dimension (users,
/// items), written over every entry of `mine`; returns each dimension's distinct
/// original ids, increasing. `shared`: each rank holds a share of the entries, and
/// the ids are those of all ranks (collective); else `mine` holds them all. Through a
/// count per id over [0, largest id] where that is at most twice the (largest share
/// of the) entries, in linear time (MovieLens's and generated ids are dense), else
/// through sorted distinct ids.
std::array<std::vector<std::int64_t>, 2> renumber(Runtime& rt, std::vector<Entry<float, 2>>& mine, bool shared);
/// A pair of `path` rated twice: rescans the file and raises the ParseError naming
/// both lines (every rank alike).
[[noreturn]] void throw_repeated_pair(const std::string& path);
/// Users and items are model rows numbered in 32 bits (Rating): OptionError beyond.
void check_rows(std::int64_t users, std::int64_t items, const std::string& what);


}  // namespace strata::apps::mf
