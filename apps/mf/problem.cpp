#include "mf/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::apps::mf {

namespace {

// Held-out membership depends only on the pair and the seed, so the split is the
// same whatever order the ratings arrive in.
bool held_out(std::int64_t user, std::int64_t item, double holdout, std::uint64_t seed) {
  const std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(user) * 0x9E3779B97F4A7C15ULL +
                                              static_cast<std::uint64_t>(item)));
  return static_cast<double>(h >> 11) * 0x1.0p-53 < holdout;
}

void split(Problem& p, std::vector<Rating> all, double holdout, std::uint64_t seed) {
  for (const auto& r : all) (held_out(r.user, r.item, holdout, seed) ? p.test : p.train).push_back(r);
}

}  // namespace

double Fit::rmse() const { return count ? std::sqrt(squared_error / static_cast<double>(count)) : 0.0; }
double Fit::loss() const { return count ? objective / static_cast<double>(count) : 0.0; }

Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed) {
  const std::int64_t users = spec.users, items = spec.items;
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
    all.push_back({static_cast<std::int64_t>(u), static_cast<std::int64_t>(i), static_cast<float>(v)});
  }
  Problem p;
  p.users = users;
  p.items = items;
  p.source = fmt::format("synthetic: {} ratings of {} users on {} items, planted rank {}", spec.ratings, users, items, r);
  split(p, std::move(all), holdout, seed);
  return p;
}

namespace {

bool is_header(const std::string& line) {
  for (char ch : line)
    if (std::isalpha(static_cast<unsigned char>(ch))) return true;
  return false;
}

// Dense ids in increasing order of the original ids.
std::int64_t renumber(std::vector<std::int64_t>& ids) {
  std::vector<std::int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (auto& id : ids) id = std::lower_bound(sorted.begin(), sorted.end(), id) - sorted.begin();
  return static_cast<std::int64_t>(sorted.size());
}

}  // namespace

Problem load(const std::string& path, double holdout, std::uint64_t seed) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("cannot open rating file '{}'", path));
  std::vector<std::int64_t> users, items, lines;
  std::vector<float> values;
  std::string line;
  std::int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (users.empty() && is_header(line)) continue;  // "userId,movieId,rating"
    std::string text = line;
    std::replace(text.begin(), text.end(), ',', ' ');
    // A fourth field is a timestamp (MovieLens: ratings.csv, u.data); it is ignored.
    long long u = -1, i = -1, when = 0;
    double r = 0;
    char extra = 0;
    int tail = 0;
    const int got = std::sscanf(text.c_str(), "%lld %lld %lf%n %lld %c", &u, &i, &r, &tail, &when, &extra);
    // 3 fields and nothing after them, or 4 (the fourth an integer) and nothing after.
    const bool fields_ok =
        got == 4 || (got == 3 && text.find_first_not_of(" \t", static_cast<std::size_t>(tail)) == std::string::npos);
    if (!fields_ok || u < 0 || i < 0 || !std::isfinite(r))
      throw ParseError(path, line_no, line,
                       "expected 'user item rating' or 'user item rating timestamp' with non-negative integer ids");
    users.push_back(u);
    items.push_back(i);
    values.push_back(static_cast<float>(r));
    lines.push_back(line_no);
  }
  if (in.bad()) throw IoError(fmt::format("error reading '{}'", path));
  if (values.empty()) throw ParseError(path, line_no, "", "the file holds no ratings");
  // A pair rated twice is an error, named by both lines (before renumbering).
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::size_t n) { return std::pair(users[n], items[n]); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t n = 1; n < order.size(); ++n)
    if (key(order[n]) == key(order[n - 1]))
      throw ParseError(path, lines[order[n]], "",
                       fmt::format("user {} rated item {} already on line {}", users[order[n]], items[order[n]],
                                   lines[order[n - 1]]));
  Problem p;
  p.users = renumber(users);
  p.items = renumber(items);
  std::vector<Rating> all(values.size());
  for (std::size_t n = 0; n < all.size(); ++n) all[n] = {users[n], items[n], values[n]};
  RandomStream rs(seed, 7);
  std::shuffle(all.begin(), all.end(), rs);
  p.source = fmt::format("{}: {} ratings of {} users on {} items", path, all.size(), p.users, p.items);
  split(p, std::move(all), holdout, seed);
  return p;
}

}  // namespace strata::apps::mf
