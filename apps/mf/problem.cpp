#include "mf/problem.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "mf/repeated_pair.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"
#include "strata/random.hpp"

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

// The held-out ratings are copied out and the others kept in place, in their order,
// so the ratings are held once (and the held-out share twice, briefly).
void split(Problem& p, std::vector<Rating> all, double holdout, std::uint64_t seed) {
  std::size_t tests = 0;
  for (const Rating& r : all) tests += held_out(r.user, r.item, holdout, seed);
  p.test.reserve(tests);
  std::size_t kept = 0;
  for (const Rating& r : all) {
    if (held_out(r.user, r.item, holdout, seed)) p.test.push_back(r);
    else all[kept++] = r;
  }
  all.resize(kept);
  p.train = std::move(all);
  p.train_count = static_cast<std::int64_t>(p.train.size());
  p.test_count = static_cast<std::int64_t>(p.test.size());
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

std::vector<std::int64_t> renumber(Runtime& rt, std::vector<Entry<float, 2>>& mine, std::size_t d, bool shared) {
  std::int64_t top = -1;
  for (const auto& e : mine) top = std::max(top, e.index[d]);
  auto most = static_cast<std::int64_t>(mine.size());
  if (shared) {
    top = rt.comm().allreduce(top, ReduceOp::max);
    most = rt.comm().allreduce(most, ReduceOp::max);
  }
  std::vector<std::int64_t> ids;
  if (top < 2 * most + 1024) {
    std::vector<std::int32_t> row(static_cast<std::size_t>(top + 1), 0);  // first: whether the id occurs
    for (const auto& e : mine) row[static_cast<std::size_t>(e.index[d])] = 1;
    if (shared) rt.comm().allreduce(std::span(row), ReduceOp::max);
    for (std::size_t id = 0; id < row.size(); ++id)  // then: its place (below kMaxRows: checked after)
      if (row[id]) {
        row[id] = static_cast<std::int32_t>(std::min<std::size_t>(ids.size(), static_cast<std::size_t>(kMaxRows)));
        ids.push_back(static_cast<std::int64_t>(id));
      }
    for (auto& e : mine) e.index[d] = row[static_cast<std::size_t>(e.index[d])];
    return ids;
  }
  ids.reserve(mine.size());
  for (const auto& e : mine) ids.push_back(e.index[d]);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (shared) {
    ids = rt.comm().allgather_vector(std::move(ids));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  for (auto& e : mine) e.index[d] = std::lower_bound(ids.begin(), ids.end(), e.index[d]) - ids.begin();
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
  p.user_ids = renumber(rt, all, 0, false);
  p.item_ids = renumber(rt, all, 1, false);
  p.users = static_cast<std::int64_t>(p.user_ids.size());
  p.items = static_cast<std::int64_t>(p.item_ids.size());
  check_rows(p.users, p.items, path);
  if (has_repeated_pair(
          all.size(), p.users, p.items, [&](std::size_t k) { return all[k].index[0]; },
          [&](std::size_t k) { return all[k].index[1]; }))
    throw_repeated_pair(path);
  p.source = fmt::format("{}: {} ratings of {} users on {} items", path, all.size(), p.users, p.items);
  // As ratings (12 bytes each, the parsed entries 24), the entries released at once.
  std::vector<Rating> ratings;
  ratings.reserve(all.size());
  for (const auto& e : all)
    ratings.push_back({static_cast<std::int32_t>(e.index[0]), static_cast<std::int32_t>(e.index[1]), e.value});
  std::vector<Entry<float, 2>>().swap(all);
  if (order == Order::serial) {  // the serial program's order: the file's, shuffled with the seed
    RandomStream rs(seed, 7);
    std::shuffle(ratings.begin(), ratings.end(), rs);
  }
  split(p, std::move(ratings), holdout, seed);
  return p;
}

}  // namespace strata::apps::mf
