#include "mf/problem.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "mf/repeated_pair.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"
#include "strata/random.hpp"
#include "strata/runtime.hpp"
#include "strata/thread_pool.hpp"

namespace strata::apps::mf {

namespace {

// Held-out membership and folds depend only on the pair and the seed, so the split is
// the same whatever order the ratings arrive in: a hash of the pair as a number in [0, 1).
double pair_unit(std::int64_t user, std::int64_t item, std::uint64_t seed) {
  const std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(user) * 0x9E3779B97F4A7C15ULL +
                                              static_cast<std::uint64_t>(item)));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

bool held_out(std::int64_t user, std::int64_t item, double holdout, std::uint64_t seed) {
  return pair_unit(user, item, seed) < holdout;
}

// The fold of a pair: the same number, cut into `folds` equal ranges.
int fold_of(std::int64_t user, std::int64_t item, int folds, std::uint64_t seed) {
  return static_cast<int>(pair_unit(user, item, seed) * folds);
}

}  // namespace

namespace {

// Runs fn(begin, end, range) over [0, n) in one contiguous range per thread of `pool`
// (the same ranges on every call for the same n), or in one range without a pool.
void for_ranges(ThreadPool* pool, std::size_t n, const std::function<void(std::size_t, std::size_t, int)>& fn) {
  if (!pool) return fn(0, n, 0);
  pool->run_ranges(static_cast<std::int64_t>(n), [&](std::int64_t begin, std::int64_t end, int th) {
    fn(static_cast<std::size_t>(begin), static_cast<std::size_t>(end), th);
  });
}

}  // namespace

// The held-out ratings are copied out and the others kept in place, in their order,
// so the ratings are held once (and the held-out share twice, briefly). The hashes,
// the costly part, are taken once each, in parallel; the kept ones move on one
// thread (a thread's range could otherwise overwrite the one before it unread).
void split(Problem& p, std::vector<Rating> all, double holdout, std::uint64_t seed, ThreadPool* pool) {
  const std::size_t n = all.size();
  const int ranges = pool ? pool->size() : 1;
  std::vector<std::uint8_t> out(n);
  std::vector<std::size_t> tests_before(static_cast<std::size_t>(ranges) + 1, 0);
  for_ranges(pool, n, [&](std::size_t begin, std::size_t end, int range) {
    std::size_t tests = 0;
    for (std::size_t k = begin; k < end; ++k) {
      out[k] = held_out(all[k].user, all[k].item, holdout, seed);
      tests += out[k];
    }
    tests_before[static_cast<std::size_t>(range) + 1] = tests;
  });
  std::partial_sum(tests_before.begin(), tests_before.end(), tests_before.begin());
  p.test.resize(tests_before.back());
  for_ranges(pool, n, [&](std::size_t begin, std::size_t end, int range) {
    std::size_t at = tests_before[static_cast<std::size_t>(range)];
    for (std::size_t k = begin; k < end; ++k)
      if (out[k]) p.test[at++] = all[k];
  });
  std::size_t kept = 0;
  for (std::size_t k = 0; k < n; ++k)
    if (!out[k]) all[kept++] = all[k];
  all.resize(kept);
  p.train = std::move(all);
  p.train_count = static_cast<std::int64_t>(p.train.size());
  p.test_count = static_cast<std::int64_t>(p.test.size());
}

// The entries' pages are handed back as they are converted, and the ratings' pages
// first touched slice by slice, so the ratings and the entries (twice their size) are
// not both held whole: that was the command's peak.
std::vector<Rating> to_ratings(Runtime& rt, std::vector<Entry<float, 2>>& entries) {
  std::vector<Rating> ratings;
  ratings.reserve(entries.size());
  auto convert = [&](std::size_t from, std::size_t to) {
    ratings.resize(to);  // within the reservation: no copy
    for_ranges(&rt.pool(), to - from, [&](std::size_t begin, std::size_t end, int) {
      for (std::size_t k = from + begin; k < from + end; ++k) {
        const auto& e = entries[k];
        ratings[k] = {static_cast<std::int32_t>(e.index[0]), static_cast<std::int32_t>(e.index[1]), e.value};
      }
    });
  };
  strata::detail::read_then_drop(entries.data(), 0, entries.size(), convert, std::size_t{16} << 20);
  strata::detail::free_now(entries);
  return ratings;
}

void check_rows(std::int64_t users, std::int64_t items, const std::string& what) {
  if (users > kMaxRows || items > kMaxRows)
    throw OptionError(fmt::format("{}: {} users and {} items: at most {} of each (model rows are 32-bit numbers)",
                                  what, users, items, kMaxRows));
}

Problem fold(const Problem& all, int f, int folds, std::uint64_t seed) {
  Problem p;
  p.users = all.users;
  p.items = all.items;
  p.source = all.source;
  p.user_ids = all.user_ids;
  p.item_ids = all.item_ids;
  for (const auto* set : {&all.train, &all.test})
    for (const Rating& r : *set) (fold_of(r.user, r.item, folds, seed) == f ? p.test : p.train).push_back(r);
  p.train_count = static_cast<std::int64_t>(p.train.size());
  p.test_count = static_cast<std::int64_t>(p.test.size());
  return p;
}

Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed) {
  const std::int64_t users = spec.users, items = spec.items;
  check_rows(users, items, "--synthetic");
  if (spec.ratings > users * items)
    throw OptionError(fmt::format("--synthetic ratings={} exceeds users x items = {}", spec.ratings, users * items));
  // Inverse-CDF table of a Zipf(0.8) law over item ranks, and a scramble of ranks to ids.
  std::vector<double> cdf(static_cast<std::size_t>(items));
  double acc = 0;
  for (std::int64_t k = 0; k < items; ++k) cdf[static_cast<std::size_t>(k)] = acc += 1.0 / std::pow(k + 1.0, 0.8);
  for (auto& c : cdf) c /= acc;
  std::vector<std::int64_t> id_of_rank(static_cast<std::size_t>(items));
  std::iota(id_of_rank.begin(), id_of_rank.end(), 0);
  RandomStream rs(seed, 7);
  for (std::int64_t k = items - 1; k > 0; --k)
    std::swap(id_of_rank[static_cast<std::size_t>(k)], id_of_rank[rs.below(static_cast<std::uint64_t>(k + 1))]);

  // Draw pairs until enough distinct ones exist (a user rates an item once), then
  // shuffle: real rating files come in no particular order.
  const CounterRng rng(seed);
  std::vector<std::uint64_t> pairs;
  pairs.reserve(static_cast<std::size_t>(spec.ratings));
  std::uint64_t c = 0;
  const auto want = static_cast<std::size_t>(spec.ratings);
  while (pairs.size() < want) {
    const auto missing = want - pairs.size();
    for (std::size_t k = 0; k < missing + missing / 8 + 16; ++k, c += 2) {
      const auto user = rng.below(c, static_cast<std::uint64_t>(users));
      const auto rank = std::lower_bound(cdf.begin(), cdf.end(), rng.uniform(c + 1)) - cdf.begin();
      const auto item = id_of_rank[static_cast<std::size_t>(std::min<std::int64_t>(rank, items - 1))];
      pairs.push_back(user * static_cast<std::uint64_t>(items) + static_cast<std::uint64_t>(item));
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  }
  std::shuffle(pairs.begin(), pairs.end(), rs);
  pairs.resize(want);

  // Biases, factors and noise come from streams keyed by the ids.
  const int r = spec.rank;
  const CounterRng user_rng(seed, 11), item_rng(seed, 12), noise_rng(seed, 13);
  const double scale = 1.0 / std::sqrt(static_cast<double>(r));
  std::vector<Rating> all;
  all.reserve(want);
  for (std::size_t n = 0; n < pairs.size(); ++n) {
    const std::uint64_t u = pairs[n] / static_cast<std::uint64_t>(items), i = pairs[n] % static_cast<std::uint64_t>(items);
    const auto stride = static_cast<std::uint64_t>(r + 1);
    double v = 3.5 + 0.4 * user_rng.normal(u * stride) + 0.5 * item_rng.normal(i * stride);
    for (std::uint64_t k = 1; k <= static_cast<std::uint64_t>(r); ++k)
      v += scale * user_rng.normal(u * stride + k) * item_rng.normal(i * stride + k);
    v += 0.3 * noise_rng.normal(n);
    v = std::clamp(std::round(v * 2) / 2, 0.5, 5.0);
    all.push_back({static_cast<std::int32_t>(u), static_cast<std::int32_t>(i), static_cast<float>(v)});
  }
  Problem p;
  p.users = users;
  p.items = items;
  p.source = fmt::format("synthetic: {} ratings of {} users on {} items, planted rank {}", spec.ratings, users, items, r);
  split(p, std::move(all), holdout, seed);
  return p;
}

namespace {

// Every rank's ratings, in file order: rank r parsed the r-th part of the file.
std::vector<Entry<float, 2>> whole_file(Runtime& rt, std::vector<Entry<float, 2>> mine) {
  if (rt.size() == 1) return mine;
  return rt.comm().allgather_vector(std::move(mine));
}

}  // namespace

namespace {

// Dense ids of one dimension through a count per id: `row[id]` marks, then numbers,
// the ids that occur.
struct DenseIds {
  std::size_t d;
  std::vector<std::int32_t> row;
  std::vector<std::int64_t> ids;
};

// Sorted distinct ids of one dimension, for ids too sparse for a table.
std::vector<std::int64_t> distinct_ids(Runtime& rt, const std::vector<Entry<float, 2>>& mine, std::size_t d,
                                       bool shared) {
  std::vector<std::int64_t> ids;
  ids.reserve(mine.size());
  for (const auto& e : mine) ids.push_back(e.index[d]);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (shared) {
    ids = rt.comm().allgather_vector(std::move(ids));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return ids;
}

}  // namespace

// Both dimensions at once, and each scan on the runtime's threads: the scans of the
// entries (24 bytes each) are what costs, so each pass over them serves both.
std::array<std::vector<std::int64_t>, 2> renumber(Runtime& rt, std::vector<Entry<float, 2>>& mine, bool shared) {
  ThreadPool* pool = &rt.pool();
  std::vector<std::array<std::int64_t, 2>> tops(static_cast<std::size_t>(pool->size()), {-1, -1});
  for_ranges(pool, mine.size(), [&](std::size_t begin, std::size_t end, int th) {
    auto& top = tops[static_cast<std::size_t>(th)];
    for (std::size_t k = begin; k < end; ++k)
      for (std::size_t d = 0; d < 2; ++d) top[d] = std::max(top[d], mine[k].index[d]);
  });
  auto most = static_cast<std::int64_t>(mine.size());
  if (shared) most = rt.comm().allreduce(most, ReduceOp::max);
  std::array<std::vector<std::int64_t>, 2> ids;
  std::vector<DenseIds> dense;
  for (std::size_t d = 0; d < 2; ++d) {
    std::int64_t top = -1;
    for (const auto& t : tops) top = std::max(top, t[d]);
    if (shared) top = rt.comm().allreduce(top, ReduceOp::max);
    if (top < 2 * most + 1024) dense.push_back({d, std::vector<std::int32_t>(static_cast<std::size_t>(top + 1), 0), {}});
    else ids[d] = distinct_ids(rt, mine, d, shared);
  }
  if (!dense.empty()) {
    for_ranges(pool, mine.size(), [&](std::size_t begin, std::size_t end, int) {
      for (std::size_t k = begin; k < end; ++k)
        for (auto& [d, row, unused] : dense)  // threads may mark one id at once
          std::atomic_ref<std::int32_t>(row[static_cast<std::size_t>(mine[k].index[d])])
              .store(1, std::memory_order_relaxed);
    });
    for (auto& [d, row, dense_ids] : dense) {
      if (shared) rt.comm().allreduce(std::span(row), ReduceOp::max);
      for (std::size_t id = 0; id < row.size(); ++id)  // its place (below kMaxRows: checked after)
        if (row[id]) {
          row[id] = static_cast<std::int32_t>(std::min<std::size_t>(dense_ids.size(), static_cast<std::size_t>(kMaxRows)));
          dense_ids.push_back(static_cast<std::int64_t>(id));
        }
    }
  }
  for_ranges(pool, mine.size(), [&](std::size_t begin, std::size_t end, int) {
    for (std::size_t k = begin; k < end; ++k) {
      auto& index = mine[k].index;
      for (const auto& [d, row, unused] : dense) index[d] = row[static_cast<std::size_t>(index[d])];
      for (std::size_t d = 0; d < 2; ++d)
        if (!ids[d].empty()) index[d] = std::lower_bound(ids[d].begin(), ids[d].end(), index[d]) - ids[d].begin();
    }
  });
  for (auto& [d, row, dense_ids] : dense) ids[d] = std::move(dense_ids);
  return ids;
}

void throw_repeated_pair(const std::string& path) {
  // Every rank rescans alike and raises the same error, naming the lines.
  const auto r = io::find_repeated_index<float, 2>(path, parse::ratings);
  STRATA_CHECK(r, "the rescan finds the pair rated twice");
  throw ParseError(path, r->line, r->text,
                   fmt::format("user {} rated item {} already on line {}", r->index[0], r->index[1], r->first_line));
}

Problem load(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed, Order order) {
  LoadReport report;
  auto all = whole_file(rt, parse_entries<float, 2>(rt, path, parse::ratings, {}, {}, &report));
  if (all.empty()) throw ParseError(path, report.lines, "", "the file holds no ratings");
  Problem p;
  auto [user_ids, item_ids] = renumber(rt, all, false);
  p.user_ids = std::move(user_ids);
  p.item_ids = std::move(item_ids);
  p.users = static_cast<std::int64_t>(p.user_ids.size());
  p.items = static_cast<std::int64_t>(p.item_ids.size());
  check_rows(p.users, p.items, path);
  p.source = fmt::format("{}: {} ratings of {} users on {} items", path, all.size(), p.users, p.items);
  // As ratings (12 bytes each, the parsed entries 24), the entries released as they
  // go; the check for repeated pairs reads the smaller ones.
  std::vector<Rating> ratings = to_ratings(rt, all);
  if (has_repeated_pair(
          rt.pool(), ratings.size(), p.users, p.items, [&](std::size_t k) { return ratings[k].user; },
          [&](std::size_t k) { return ratings[k].item; }))
    throw_repeated_pair(path);
  if (order == Order::serial) {  // the serial program's order: the file's, shuffled with the seed
    RandomStream rs(seed, 7);
    std::shuffle(ratings.begin(), ratings.end(), rs);
  }
  split(p, std::move(ratings), holdout, seed, &rt.pool());
  return p;
}

}  // namespace strata::apps::mf
