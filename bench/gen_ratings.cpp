// Writes a synthetic rating file "user item rating" (one triplet per line) with
// skewed item popularity: item ids are drawn from a Zipf-like law, then scrambled
// so popular items are not all at low ids. Deterministic for a given seed.
//
//   strata-gen-ratings --out FILE [--lines N] [--users U] [--items I] [--seed S]
//
// (user, item) pairs are distinct, as in real rating data; ratings come from a
// planted low-rank model (see below), so a fitted model has a known target.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/random.hpp"

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "strata-gen-ratings: %s\nusage: strata-gen-ratings --out FILE [--lines N] [--users U] "
                       "[--items I] [--seed S]\n", why);
  std::exit(2);
}

long long number(const char* opt, const char* v) {
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x <= 0) usage(fmt::format("{} needs a positive integer, got '{}'", opt, v).c_str());
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  long long lines = 10'000'000, users = 200'000, items = 20'000, seed = 1;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a).c_str());
    const char* v = argv[++i];
    if (a == "--out") out = v;
    else if (a == "--lines") lines = number("--lines", v);
    else if (a == "--users") users = number("--users", v);
    else if (a == "--items") items = number("--items", v);
    else if (a == "--seed") seed = number("--seed", v);
    else usage(fmt::format("unknown option {}", a).c_str());
  }
  if (out.empty()) usage("--out is required");
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (!f) usage(fmt::format("cannot write '{}': {}", out, std::strerror(errno)).c_str());

  // Inverse-CDF table of a Zipf(0.8) law over item ranks, and a scramble of ranks to ids.
  std::vector<double> cdf(static_cast<std::size_t>(items));
  double acc = 0;
  for (long long k = 0; k < items; ++k) cdf[static_cast<std::size_t>(k)] = acc += 1.0 / std::pow(k + 1.0, 0.8);
  for (auto& c : cdf) c /= acc;
  std::vector<long long> id_of_rank(static_cast<std::size_t>(items));
  for (long long k = 0; k < items; ++k) id_of_rank[static_cast<std::size_t>(k)] = k;
  strata::RandomStream rs(static_cast<std::uint64_t>(seed), 7);
  for (long long k = items - 1; k > 0; --k)
    std::swap(id_of_rank[static_cast<std::size_t>(k)], id_of_rank[rs.below(static_cast<std::uint64_t>(k + 1))]);

  // Draw (user, item) pairs until `lines` distinct ones exist (a user rates an item
  // once), then shuffle them so the file is in no particular order.
  if (lines > users * items) usage("--lines exceeds users x items");
  const strata::CounterRng rng(static_cast<std::uint64_t>(seed));
  std::vector<std::uint64_t> pairs;
  pairs.reserve(static_cast<std::size_t>(lines));
  std::uint64_t c = 0;
  while (static_cast<long long>(pairs.size()) < lines) {
    const auto missing = static_cast<std::size_t>(lines) - pairs.size();
    for (std::size_t k = 0; k < missing + missing / 8 + 16; ++k, c += 2) {
      const auto user = rng.below(c, static_cast<std::uint64_t>(users));
      const auto rank = std::lower_bound(cdf.begin(), cdf.end(), rng.uniform(c + 1)) - cdf.begin();
      const auto item = static_cast<std::uint64_t>(id_of_rank[static_cast<std::size_t>(std::min<long long>(rank, items - 1))]);
      pairs.push_back(user * static_cast<std::uint64_t>(items) + item);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  }
  std::shuffle(pairs.begin(), pairs.end(), rs);
  pairs.resize(static_cast<std::size_t>(lines));
  // Ratings follow a planted model with known ground truth:
  //   r = 3.5 + b_user + b_item + <p_user, q_item> + noise,
  // rounded to half stars in [0.5, 5]; biases, rank-5 factors and noise are drawn
  // from streams keyed by the ids, so nothing has to be stored.
  constexpr int kRank = 5;
  const strata::CounterRng user_rng(static_cast<std::uint64_t>(seed), 11), item_rng(static_cast<std::uint64_t>(seed), 12),
      noise_rng(static_cast<std::uint64_t>(seed), 13);
  fmt::memory_buffer buf;
  for (std::size_t n = 0; n < pairs.size(); ++n) {
    const std::uint64_t user = pairs[n] / static_cast<std::uint64_t>(items), item = pairs[n] % static_cast<std::uint64_t>(items);
    double r = 3.5 + 0.4 * user_rng.normal(user * (kRank + 1)) + 0.5 * item_rng.normal(item * (kRank + 1));
    for (int k = 1; k <= kRank; ++k)
      r += 0.45 * user_rng.normal(user * (kRank + 1) + static_cast<std::uint64_t>(k)) *
           item_rng.normal(item * (kRank + 1) + static_cast<std::uint64_t>(k));
    r += 0.3 * noise_rng.normal(n);
    const double half_stars = std::clamp(std::round(r * 2), 1.0, 10.0);
    fmt::format_to(std::back_inserter(buf), "{} {} {}\n", user, item, half_stars * 0.5);
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  if (std::fclose(f) != 0) usage(fmt::format("error writing '{}'", out).c_str());
  return 0;
}
