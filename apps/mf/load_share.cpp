// load_share (problem.hpp): a rating file read into a share per rank, so the memory a
// rank needs is its part of the ratings, not the file (issue #27: mf on 4 ranks).
#include <algorithm>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "mf/problem.hpp"
#include "mf/repeated_pair.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"

namespace strata::apps::mf {
namespace {

using Entries = std::vector<Entry<float, 2>>;

// Whether some (user, item) pair appears twice on any rank: each pair goes to the
// rank its user falls to (user mod ranks), which checks its users' pairs in linear
// time (has_repeated_pair; sorting them took 0.3 s on a rank of two, 10M ratings).
bool repeated_pair_anywhere(Runtime& rt, const Entries& mine, std::int64_t users, std::int64_t items) {
  const auto P = static_cast<std::uint64_t>(rt.size());
  std::vector<std::size_t> bytes(P, 0);
  for (const auto& e : mine) bytes[static_cast<std::uint64_t>(e.index[0]) % P] += sizeof(std::uint64_t);
  std::vector<Bytes> send(P);
  for (std::size_t r = 0; r < P; ++r) send[r].resize(bytes[r]);
  std::fill(bytes.begin(), bytes.end(), 0);
  for (const auto& e : mine) {
    const auto user = static_cast<std::uint64_t>(e.index[0]), item = static_cast<std::uint64_t>(e.index[1]);
    const std::uint64_t pair = user << 32 | item;  // both below 2^31 (checked)
    std::memcpy(send[user % P].data() + bytes[user % P], &pair, sizeof pair);
    bytes[user % P] += sizeof pair;
  }
  std::vector<Bytes> received = rt.comm().alltoallv(send);
  for (auto& s : send) strata::detail::free_now(s);
  const std::vector<std::uint64_t> pairs = Comm::concatenated<std::uint64_t>(received);
  for (auto& r : received) strata::detail::free_now(r);
  const auto mine_users = static_cast<std::int64_t>((static_cast<std::uint64_t>(users) + P - 1) / P);
  const bool repeated = has_repeated_pair(
      rt.pool(), pairs.size(), mine_users, items, [&](std::size_t k) { return static_cast<std::int64_t>((pairs[k] >> 32) / P); },
      [&](std::size_t k) { return static_cast<std::int64_t>(pairs[k] & 0xFFFF'FFFFu); });
  return rt.comm().allreduce(std::int64_t{repeated}, ReduceOp::max) > 0;
}

}  // namespace

Problem load_share(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed) {
  LoadReport report;
  Entries mine = parse_entries<float, 2>(rt, path, parse::ratings, {}, {}, &report);
  if (rt.comm().allreduce(static_cast<std::int64_t>(mine.size()), ReduceOp::sum) == 0)
    throw ParseError(path, report.lines, "", "the file holds no ratings");
  Problem p;
  auto [user_ids, item_ids] = renumber(rt, mine, true);
  p.user_ids = std::move(user_ids);
  p.item_ids = std::move(item_ids);
  p.users = static_cast<std::int64_t>(p.user_ids.size());
  p.items = static_cast<std::int64_t>(p.item_ids.size());
  check_rows(p.users, p.items, path);
  if (repeated_pair_anywhere(rt, mine, p.users, p.items)) throw_repeated_pair(path);
  std::vector<Rating> ratings = to_ratings(rt, mine);  // frees `mine`
  split(p, std::move(ratings), holdout, seed, &rt.pool());
  p.shared = true;
  p.train_count = rt.comm().allreduce(p.train_count, ReduceOp::sum);
  p.test_count = rt.comm().allreduce(p.test_count, ReduceOp::sum);
  p.source = fmt::format("{}: {} ratings of {} users on {} items", path, p.train_count + p.test_count, p.users,
                         p.items);
  return p;
}

}  // namespace strata::apps::mf
