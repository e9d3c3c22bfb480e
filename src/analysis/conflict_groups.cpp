#include "analysis/conflict_groups.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <queue>

#include <fmt/format.h>

#include "analysis/disjoint_sets.hpp"
#include "strata/error.hpp"

namespace strata::analysis {

namespace {

// A recorded access, regrouped by a hash of its element.
struct Packed {
  std::uint64_t element;
  std::uint32_t iteration_and_write;  // iteration << 1 | write
};

std::uint64_t mix(std::uint64_t element) {
  return element * 0x9E3779B97F4A7C15ull;
}

// Per element of one bucket: an iteration that touched it (-1: empty slot) and
// whether anyone writes it. Open addressing with linear probing, sized for the
// bucket so it stays in cache.
struct Slot {
  std::uint64_t element = 0;
  std::int32_t first = -1;
  bool written = false;
};

std::size_t probe(std::span<Slot> slots, std::uint64_t element) {
  const std::size_t mask = slots.size() - 1;
  std::size_t i = static_cast<std::size_t>(mix(element) >> 20) & mask;
  while (slots[i].first >= 0 && slots[i].element != element) i = (i + 1) & mask;
  return i;
}

}  // namespace

Groups conflict_groups(std::int64_t iterations, std::span<const ElementAccess> accesses) {
  if (iterations < 0 || iterations > std::numeric_limits<std::int32_t>::max())
    throw ShapeError(
        fmt::format("conflict_groups: {} iterations (at most 2^31-1 supported)", iterations));
  const auto n = static_cast<std::int32_t>(iterations);
  // One table over all distinct elements misses the cache (and the TLB) on nearly
  // every access once it outgrows them. So first scatter the accesses into buckets by
  // the top bits of the element's hash, then handle each bucket with a table that fits
  // in cache: every element lives in exactly one bucket.
  constexpr std::size_t kBucketTarget = 1 << 15;  // accesses per bucket, on average
  int bits = 0;
  while (bits < 12 && (accesses.size() >> bits) > kBucketTarget) ++bits;
  const std::size_t buckets = std::size_t{1} << bits;
  const auto bucket_of = [bits](std::uint64_t e) {
    return bits == 0 ? 0 : static_cast<std::size_t>(mix(e) >> (64 - bits));
  };
  std::vector<std::size_t> start(buckets + 1, 0);
  for (const ElementAccess& a : accesses) {
    if (a.iteration < 0 || a.iteration >= iterations)
      throw ShapeError(fmt::format("conflict_groups: access at iteration {} outside [0, {})",
                                   a.iteration, iterations));
    ++start[bucket_of(a.element) + 1];
  }
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<Packed> packed(accesses.size());
  {
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (const ElementAccess& a : accesses)
      packed[next[bucket_of(a.element)]++] = {
          a.element, static_cast<std::uint32_t>(a.iteration) << 1 | (a.write ? 1u : 0u)};
  }
  // Per bucket, pass 1 finds the written elements and pass 2 joins every iteration
  // touching one (reads before the first write need the second pass). The slot keeps
  // the set's latest root so the next union on that element starts at the top.
  DisjointSets sets(n);
  std::vector<Slot> table;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::span<const Packed> bucket(packed.data() + start[b], start[b + 1] - start[b]);
    if (bucket.empty()) continue;
    table.assign(std::bit_ceil(2 * bucket.size()), Slot{});
    for (const Packed& a : bucket) {
      Slot& s = table[probe(table, a.element)];
      if (s.first < 0)
        s = {a.element, static_cast<std::int32_t>(a.iteration_and_write >> 1), false};
      s.written = s.written || (a.iteration_and_write & 1u);
    }
    for (const Packed& a : bucket) {
      Slot& s = table[probe(table, a.element)];
      if (s.written)
        s.first = sets.unite(s.first, static_cast<std::int32_t>(a.iteration_and_write >> 1));
    }
  }
  Groups g;
  g.group_of.assign(static_cast<std::size_t>(n), -1);
  std::vector<std::int32_t> id_of_root(static_cast<std::size_t>(n), -1);
  for (std::int32_t i = 0; i < n; ++i) {
    std::int32_t& id = id_of_root[static_cast<std::size_t>(sets.find(i))];
    if (id < 0) {
      id = g.count++;
      g.group_size.push_back(0);
    }
    g.group_of[static_cast<std::size_t>(i)] = id;
    ++g.group_size[static_cast<std::size_t>(id)];
  }
  return g;
}

std::vector<std::int32_t> pack_groups(std::span<const std::int64_t> group_size, int workers) {
  if (workers < 1)
    throw OptionError(fmt::format("pack_groups: workers = {}, need at least 1", workers));
  std::vector<std::int32_t> order(group_size.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return group_size[static_cast<std::size_t>(a)] > group_size[static_cast<std::size_t>(b)];
  });
  // Min-heap on (load, worker id): the least-loaded worker, lower id on ties.
  using Load = std::pair<std::int64_t, std::int32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> heap;
  for (std::int32_t w = 0; w < workers; ++w) heap.push({0, w});
  std::vector<std::int32_t> worker_of(group_size.size());
  for (std::int32_t g : order) {
    auto [load, w] = heap.top();
    heap.pop();
    worker_of[static_cast<std::size_t>(g)] = w;
    heap.push({load + group_size[static_cast<std::size_t>(g)], w});
  }
  return worker_of;
}

double imbalance(std::span<const std::int64_t> group_size, std::span<const std::int32_t> worker_of,
                 int workers) {
  if (workers < 1)
    throw OptionError(fmt::format("imbalance: workers = {}, need at least 1", workers));
  if (group_size.size() != worker_of.size())
    throw ShapeError(fmt::format("imbalance: {} group sizes but {} assignments", group_size.size(),
                                 worker_of.size()));
  std::vector<std::int64_t> load(static_cast<std::size_t>(workers), 0);
  for (std::size_t g = 0; g < group_size.size(); ++g) {
    const std::int32_t w = worker_of[g];
    if (w < 0 || w >= workers)
      throw ShapeError(fmt::format("imbalance: group {} on worker {} of {}", g, w, workers));
    load[static_cast<std::size_t>(w)] += group_size[g];
  }
  const std::int64_t total = std::accumulate(load.begin(), load.end(), std::int64_t{0});
  if (total == 0) return 1.0;
  const double mean = static_cast<double>(total) / workers;
  return static_cast<double>(*std::max_element(load.begin(), load.end())) / mean;
}

}  // namespace strata::analysis
