// load_share (problem.hpp): a rating file read into a share per rank, so the memory a
// rank needs is its part of the ratings, not the file (issue #27: mf on 4 ranks).
#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "mf/problem.hpp"
#include "strata/error.hpp"
#include "strata/io/load.hpp"

namespace strata::apps::mf {
namespace {

using Entries = std::vector<Entry<float, 2>>;

// load()'s renumbering over every rank's entries: the distinct ids of dimension d,
// increasing, gathered from all ranks; each entry's id replaced by its place among
// them (through a table when the ids are dense, else by search: the same places).
std::vector<std::int64_t> renumber_shares(Runtime& rt, Entries& mine, std::size_t d) {
  std::vector<std::int64_t> ids;
  ids.reserve(mine.size());
  for (const auto& e : mine) ids.push_back(e.index[d]);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ids = rt.comm().allgather_vector(std::move(ids));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const std::int64_t top = ids.empty() ? -1 : ids.back();
  if (top < 2 * static_cast<std::int64_t>(ids.size()) + 1024) {
    std::vector<std::int32_t> row(static_cast<std::size_t>(top + 1), -1);  // below kMaxRows: checked after
    for (std::size_t k = 0; k < ids.size() && k <= static_cast<std::size_t>(kMaxRows); ++k)
      row[static_cast<std::size_t>(ids[k])] = static_cast<std::int32_t>(k);
    for (auto& e : mine) e.index[d] = row[static_cast<std::size_t>(e.index[d])];
  } else {
    for (auto& e : mine) e.index[d] = std::lower_bound(ids.begin(), ids.end(), e.index[d]) - ids.begin();
  }
  return ids;
}

// Whether some (user, item) pair appears twice on any rank: each pair goes to the
// rank its user hashes to, where the pairs are sorted and neighbours compared.
bool repeated_pair_anywhere(Runtime& rt, const Entries& mine) {
  const auto P = static_cast<std::uint64_t>(rt.size());
  std::vector<Bytes> send(P);
  for (const auto& e : mine) {
    const auto user = static_cast<std::uint64_t>(e.index[0]), item = static_cast<std::uint64_t>(e.index[1]);
    const std::uint64_t pair = user << 32 | item;  // both below 2^31 (checked)
    const auto bytes = std::as_bytes(std::span(&pair, 1));
    send[user % P].insert(send[user % P].end(), bytes.begin(), bytes.end());
  }
  std::vector<Bytes> received = rt.comm().alltoallv(send);
  send = {};
  std::vector<std::uint64_t> pairs = Comm::concatenated<std::uint64_t>(received);
  std::sort(pairs.begin(), pairs.end());
  const std::int64_t repeated = std::adjacent_find(pairs.begin(), pairs.end()) != pairs.end() ? 1 : 0;
  return rt.comm().allreduce(repeated, ReduceOp::max) > 0;
}

}  // namespace

Problem load_share(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed) {
  LoadReport report;
  Entries mine = parse_entries<float, 2>(rt, path, parse::ratings, {}, {}, &report);
  if (rt.comm().allreduce(static_cast<std::int64_t>(mine.size()), ReduceOp::sum) == 0)
    throw ParseError(path, report.lines, "", "the file holds no ratings");
  Problem p;
  p.user_ids = renumber_shares(rt, mine, 0);
  p.item_ids = renumber_shares(rt, mine, 1);
  p.users = static_cast<std::int64_t>(p.user_ids.size());
  p.items = static_cast<std::int64_t>(p.item_ids.size());
  check_rows(p.users, p.items, path);
  if (repeated_pair_anywhere(rt, mine)) throw_repeated_pair(path);
  std::vector<Rating> ratings;
  ratings.reserve(mine.size());
  for (const auto& e : mine)
    ratings.push_back({static_cast<std::int32_t>(e.index[0]), static_cast<std::int32_t>(e.index[1]), e.value});
  Entries().swap(mine);
  split(p, std::move(ratings), holdout, seed);
  p.shared = true;
  p.train_count = rt.comm().allreduce(p.train_count, ReduceOp::sum);
  p.test_count = rt.comm().allreduce(p.test_count, ReduceOp::sum);
  p.source = fmt::format("{}: {} ratings of {} users on {} items", path, p.train_count + p.test_count, p.users,
                         p.items);
  return p;
}

}  // namespace strata::apps::mf
