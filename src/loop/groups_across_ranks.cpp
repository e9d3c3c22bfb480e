// Conflict groups of iterations that several ranks hold (loop/groups_across_ranks.hpp).
#include "loop/groups_across_ranks.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "analysis/disjoint_sets.hpp"
#include "loop/touch_set.hpp"
#include "strata/detail/collective_error.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::loop::detail {
GroupsAcrossRanks conflict_groups_across_ranks(Comm& comm, std::int64_t iterations,
                                               std::span<const analysis::ElementAccess> accesses) {
  const int P = comm.size();
  // 1. This rank's components, numbered after those of lower ranks.
  analysis::Groups local;  // an error on any rank is every rank's, before they wait for each other
  strata::detail::all_or_none(comm, [&] { local = analysis::conflict_groups(iterations, accesses); });
  std::int64_t components = 0;
  const std::int64_t first = comm.exclusive_scan(local.count, &components);
  if (components > std::numeric_limits<std::int32_t>::max())
    throw ShapeError(fmt::format("conflict groups across ranks: {} components (at most 2^31-1 supported)",
                                 components));

  // 2. Each element's touches go to its referee, which joins the components touching
  //    an element one of them writes.
  const auto referee = [P](std::uint64_t element) {
    return static_cast<std::size_t>(mix64(element) % static_cast<std::uint64_t>(P));
  };
  std::vector<Bytes> send(static_cast<std::size_t>(P));
  {
    TouchSet mine;
    for (const auto& a : accesses)
      mine.add(a.element, static_cast<std::uint64_t>(first + local.group_of[static_cast<std::size_t>(a.iteration)]),
               a.write);
    mine.for_each([&](const Touch& t) {
      const auto bytes = std::as_bytes(std::span(&t, 1));
      Bytes& to = send[referee(t.key)];
      to.insert(to.end(), bytes.begin(), bytes.end());
    });
  }
  std::vector<Bytes> received = comm.alltoallv(send);
  strata::detail::free_now(send);
  // Distinct already: each rank sent its own components' touches once.
  std::vector<Touch> touches = Comm::concatenated<Touch>(received);
  std::sort(touches.begin(), touches.end());
  // The referee keeps only joins that merge two of its sets, so what every rank
  // receives from it is less than the components it saw, however many elements they
  // share (a hot row written by every component costs one join a component).
  std::vector<std::uint64_t> seen;  // the components this referee heard of, ascending
  seen.reserve(touches.size());
  for (const Touch& t : touches) seen.push_back(t.owner());
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  const auto index_of = [&](std::uint64_t c) {
    return static_cast<std::int32_t>(std::lower_bound(seen.begin(), seen.end(), c) - seen.begin());
  };
  analysis::DisjointSets refereed(static_cast<std::int32_t>(seen.size()));
  std::vector<std::int64_t> joins;  // pairs of components to join
  for (std::size_t k = 0; k < touches.size();) {
    std::size_t end = k;
    bool written = false;
    for (; end < touches.size() && touches[end].key == touches[k].key; ++end)
      written = written || touches[end].flag();
    if (written)
      for (std::size_t j = k + 1; j < end; ++j)
        if (const std::int32_t a = index_of(touches[k].owner()), b = index_of(touches[j].owner());
            refereed.find(a) != refereed.find(b)) {
          refereed.unite(a, b);
          joins.push_back(static_cast<std::int64_t>(touches[k].owner()));
          joins.push_back(static_cast<std::int64_t>(touches[j].owner()));
        }
    k = end;
  }
  strata::detail::free_now(touches);
  strata::detail::free_now(seen);

  // 3. Every rank joins the components alike and numbers the groups by their first.
  joins = comm.allgather_vector(std::move(joins));
  const std::vector<std::int64_t> sizes = comm.allgather_vector(std::move(local.group_size));
  const auto C = static_cast<std::int32_t>(components);
  analysis::DisjointSets sets(C);
  for (std::size_t k = 0; k + 1 < joins.size(); k += 2)
    sets.unite(static_cast<std::int32_t>(joins[k]), static_cast<std::int32_t>(joins[k + 1]));
  strata::detail::free_now(joins);
  // Groups numbered in order of their first component, as conflict_groups numbers them
  // by their first iteration, whatever the order of the joins.
  GroupsAcrossRanks out;
  std::vector<std::int32_t> group_of_component(static_cast<std::size_t>(C)), id_of_root(static_cast<std::size_t>(C), -1);
  for (std::int32_t c = 0; c < C; ++c) {
    std::int32_t& id = id_of_root[static_cast<std::size_t>(sets.find(c))];
    if (id < 0) {
      id = static_cast<std::int32_t>(out.group_size.size());
      out.group_size.push_back(0);
    }
    group_of_component[static_cast<std::size_t>(c)] = id;
    out.group_size[static_cast<std::size_t>(id)] += sizes[static_cast<std::size_t>(c)];
  }
  out.group_of.resize(local.group_of.size());
  for (std::size_t i = 0; i < local.group_of.size(); ++i)
    out.group_of[i] = group_of_component[static_cast<std::size_t>(first + local.group_of[i])];
  return out;
}

}  // namespace strata::loop::detail
