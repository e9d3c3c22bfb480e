// Conflict groups spread over every rank (loop/spread.hpp).
#include "loop/spread.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/conflict_groups.hpp"
#include "loop/groups_across_ranks.hpp"
#include "loop/loop_internal.hpp"
#include "loop/ownership.hpp"
#include "loop/split_groups.hpp"
#include "loop/touch_set.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/detail/collective_error.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::loop {

detail::SpaceView HostedSpace::view(const detail::SpaceView& real) const {
  detail::SpaceView v = real;
  v.sparse = true;
  v.box = nullptr;
  v.local_nnz = static_cast<std::int64_t>(arrival.size());
  v.keys = {reinterpret_cast<const std::byte*>(keys.data()), v.local_nnz, v.dims, 8};
  v.values = const_cast<std::byte*>(values.data());  // never written: spread bodies take elements by value
  return v;
}

namespace detail {
namespace {

std::uint64_t local_fingerprint(const SpaceView& space) {
  return fingerprint({space.values, static_cast<std::size_t>(space.local_nnz) * space.elem_size});
}

// The iterations that arrived at their host, each rank's part in its order, from rank
// 0's up: their elements, and at planning their keys (dims each) and threads.
struct Arrived {
  std::vector<std::int64_t> keys;
  std::vector<std::byte> values;
  std::vector<std::int32_t> threads;
  std::vector<std::size_t> part_sizes;  ///< iterations from each rank (with keys only)
};

// Collective: sends each iteration of this rank's part of the real space to the rank
// hosting it (h.host_of), with its element (and its key and thread, where `thread`
// is given: at planning).
Arrived send_to_hosts(const HostedSpace& h, const SpaceView& space, const std::vector<std::int32_t>* thread) {
  STRATA_CHECK(static_cast<std::int64_t>(h.host_of.size()) == space.local_nnz,
               "a spread plan's space changed its number of iterations without a new plan");
  const auto P = static_cast<std::size_t>(space.rt->size());
  const auto dims = static_cast<std::size_t>(space.dims);
  const std::size_t es = space.elem_size;
  std::vector<std::size_t> count(P, 0), at(P, 0);
  for (const auto r : h.host_of) ++count[static_cast<std::size_t>(r)];
  std::vector<Bytes> keys(P), values(P), threads(P);
  for (std::size_t r = 0; r < P; ++r) {
    values[r].resize(count[r] * es);
    if (!thread) continue;
    keys[r].resize(count[r] * dims * sizeof(std::int64_t));
    threads[r].resize(count[r] * sizeof(std::int32_t));
  }
  std::int64_t index[4];
  for (std::int64_t pos = 0; pos < space.local_nnz; ++pos) {
    const auto to = static_cast<std::size_t>(h.host_of[static_cast<std::size_t>(pos)]);
    const std::size_t k = at[to]++;
    std::memcpy(values[to].data() + k * es, space.values + static_cast<std::size_t>(pos) * es, es);
    if (!thread) continue;
    index_at(space, pos, index);
    std::memcpy(keys[to].data() + k * dims * sizeof(std::int64_t), index, dims * sizeof(std::int64_t));
    std::memcpy(threads[to].data() + k * sizeof(std::int32_t), &(*thread)[static_cast<std::size_t>(pos)],
                sizeof(std::int32_t));
  }
  Comm& comm = space.rt->comm();
  Arrived a;
  auto got = comm.alltoallv(values);
  a.values = Comm::concatenated<std::byte>(got);
  if (!thread) return a;
  got = comm.alltoallv(keys);
  for (const Bytes& part : got) a.part_sizes.push_back(part.size() / (dims * sizeof(std::int64_t)));
  a.keys = Comm::concatenated<std::int64_t>(got);
  got = comm.alltoallv(threads);
  a.threads = Comm::concatenated<std::int32_t>(got);
  return a;
}

// Collective: hosts the iterations h.host_of sends here, in key order (h.arrival), and
// returns each one's thread (`thread`: per iteration of this rank's part).
std::vector<std::int32_t> host_first(HostedSpace& h, const SpaceView& space, const std::vector<std::int32_t>& thread) {
  const Arrived a = send_to_hosts(h, space, &thread);
  const auto dims = static_cast<std::size_t>(space.dims);
  const std::size_t es = space.elem_size, n = a.threads.size();
  auto key = [&](std::int64_t p) { return a.keys.data() + static_cast<std::size_t>(p) * dims; };
  h.arrival.resize(n);
  std::iota(h.arrival.begin(), h.arrival.end(), 0);
  const auto before = [&](std::int64_t x, std::int64_t y) {
    return std::lexicographical_compare(key(x), key(x) + dims, key(y), key(y) + dims);
  };
  // Each rank sends its part in its own key order: merging the parts, pairs of
  // neighbours at a time, costs log(ranks) passes where a sort would cost log(n).
  std::vector<std::size_t> cut{0};
  for (const std::size_t size : a.part_sizes) cut.push_back(cut.back() + size);
  const auto at = [&](std::size_t c) { return h.arrival.begin() + static_cast<std::ptrdiff_t>(cut[c]); };
  bool parts_sorted = true;
  for (std::size_t p = 0; p + 1 < cut.size() && parts_sorted; ++p)
    parts_sorted = std::is_sorted(at(p), at(p + 1), before);
  if (!parts_sorted) std::sort(h.arrival.begin(), h.arrival.end(), before);
  for (std::size_t width = 1; parts_sorted && width + 1 < cut.size(); width *= 2)
    for (std::size_t p = 0; p + width + 1 < cut.size(); p += 2 * width)
      std::inplace_merge(at(p), at(p + width), at(std::min(p + 2 * width, cut.size() - 1)), before);
  h.keys.resize(n * dims);
  h.values.resize(n * es);
  std::vector<std::int32_t> threads(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto from = static_cast<std::size_t>(h.arrival[k]);
    std::copy_n(key(h.arrival[k]), dims, h.keys.data() + k * dims);
    std::memcpy(h.values.data() + k * es, a.values.data() + from * es, es);
    threads[k] = a.threads[from];
  }
  h.source_fingerprint = local_fingerprint(space);
  return threads;
}

// "emb[17, :]" or "count[5]": how a refusal names unit `unit` of tracked array k.
std::string unit_label(const OwnershipTable& table, std::size_t k, std::uint64_t unit) {
  const auto* a = strata::detail::ArrayBase::find_array(table.array_id(k));
  auto shape = a->shape_vector();
  if (table.by_row(k)) shape.pop_back();
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<std::int64_t>(unit % static_cast<std::uint64_t>(shape[d]));
    unit /= static_cast<std::uint64_t>(shape[d]);
  }
  return fmt::format("{}[{}{}]", strata::detail::array_label(*a), fmt::join(index, ", "), table.by_row(k) ? ", :" : "");
}

// The rank owning the first element of unit `unit` (unit_elems elements) of `a`.
int owner_of_unit(const strata::detail::ArrayBase& a, std::uint64_t unit, std::size_t unit_elems,
                  std::vector<std::int64_t>& index) {
  const auto& dist = a.distribution_of();
  std::uint64_t at = unit * unit_elems;
  for (std::size_t d = index.size(); d-- > 0;) {
    const auto e = static_cast<std::uint64_t>(dist.shape()[d]);
    index[d] = static_cast<std::int64_t>(at % e);
    at /= e;
  }
  return dist.owner(index.data());
}

// Collective. Per array the loop reads or writes in place, the units the iterations
// this rank hosts touched when planned (HostedSpace::Units), and which of them they
// wrote (`wrote`, per place of `table`). Each rank recorded its own part's iterations:
// `units` holds the place (table.unit_of) of each of its `accesses`, which it sends to
// the rank hosting the access's iteration (`host_of`).
std::vector<HostedSpace::Units> planned_units(Comm& comm, const OwnershipTable& table,
                                              const std::vector<analysis::ElementAccess>& accesses,
                                              const std::vector<std::uint64_t>& units,
                                              const std::vector<std::int32_t>& host_of,
                                              std::vector<std::uint8_t>& wrote) {
  std::vector<Bytes> send(static_cast<std::size_t>(comm.size()));
  {
    TouchSet touched;  // (place, host), wrote
    for (std::size_t k = 0; k < accesses.size(); ++k)
      if (units[k] != OwnershipTable::kNoUnit)  // else an array the table does not track
        touched.add(units[k], static_cast<std::uint64_t>(host_of[static_cast<std::size_t>(accesses[k].iteration)]),
                    accesses[k].write);
    touched.for_each([&](const Touch& t) {
      const std::uint64_t word = t.key << 1 | (t.flag() ? 1u : 0u);
      const auto bytes = std::as_bytes(std::span(&word, 1));
      Bytes& to = send[static_cast<std::size_t>(t.owner())];
      to.insert(to.end(), bytes.begin(), bytes.end());
    });
  }
  std::vector<Bytes> got = comm.alltoallv(send);
  strata::detail::free_now(send);
  std::vector<std::uint8_t> mine(table.units(), 0);
  wrote.assign(table.units(), 0);
  for (const auto word : Comm::concatenated<std::uint64_t>(got)) {  // place << 1 | wrote
    // Every rank numbers the places alike (the same table over the same arrays).
    STRATA_CHECK((word >> 1) < mine.size(), "a unit another rank recorded lies outside this rank's table");
    mine[word >> 1] = 1;
    wrote[word >> 1] |= static_cast<std::uint8_t>(word & 1);
  }
  std::vector<HostedSpace::Units> out(table.tracked_arrays());
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].array_id = table.array_id(k);
    out[k].unit_elems = table.unit_elems(k);
  }
  table.for_each_unit([&](std::size_t k, std::uint64_t unit, std::size_t place) {
    if (mine[place]) out[k].needed.push_back(unit);
  });
  return out;
}

// The units `hosted` keeps of array `id`, or nullptr (an array copied whole).
const HostedSpace::Units* units_of(const HostedSpace* hosted, std::uint64_t id) {
  if (hosted)
    for (const auto& u : hosted->units)
      if (u.array_id == id) return &u;
  return nullptr;
}
const HostedSpace::Units* units_of(const Plan& plan, std::uint64_t id) { return units_of(plan.hosted.get(), id); }

}  // namespace

bool can_spread(const Plan& plan, const SpaceView& space, const LoopBody& body) {
  if (plan.ranks < 2 || plan.choice.strategy != analysis::Strategy::groups || !plan.irregular || plan.ordered ||
      !body.reads_only || space.dims > 4 || reads_relaxed_arrays(plan))
    return false;
  for (const auto& role : plan.roles) {
    if (!role.read && !role.written) continue;  // written through Buffers only: flushed at the owners
    const auto* a = strata::detail::ArrayBase::find_array(role.array_id);
    if (!a || a->is_sparse_array()) return false;
  }
  return true;
}

std::optional<std::vector<std::int32_t>> spread_groups(Plan& plan, const SpaceView& space, const LoopBody& body,
                                                       const std::vector<std::uint64_t>& row_keyed,
                                                       std::int64_t expected_accesses) {
  Runtime& rt = *space.rt;
  Comm& comm = rt.comm();
  const int T = plan.threads, W = plan.workers;
  // Numbers the units of the arrays the loop reads or writes in place.
  const OwnershipTable table(plan, /*track_reads=*/true);
  std::vector<analysis::ElementAccess> accesses;  // of this rank's iterations
  std::vector<std::uint64_t> units;  // per access, its unit in `table` (kNoUnit: an array only read)
  {
    // Subscripts may depend on the arrays' values: the pass reads them whole.
    CallCopies copies(plan, /*whole=*/true);
    // Each rank records its own iterations: an error on one is every rank's.
    strata::detail::all_or_none(comm, [&] {
      RecordedAccesses recorded = record_accesses(space, body, row_keyed, &table, expected_accesses);
      accesses = std::move(recorded.elements);
      units = std::move(recorded.units);
    });
  }
  const GroupsAcrossRanks g = conflict_groups_across_ranks(comm, space.local_nnz, accesses);
  const std::int64_t n = comm.allreduce(space.local_nnz, ReduceOp::sum);
  // A group rank 0's threads would split (split_groups.cpp: above 1.1x a thread's
  // share) runs faster split there than whole on one worker.
  const std::int64_t largest = g.group_size.empty() ? 0 : *std::max_element(g.group_size.begin(), g.group_size.end());
  if (T > 1 && static_cast<double>(largest) > kSplitAbove * static_cast<double>(n) / T) return std::nullopt;
  // Every rank places the groups alike (the same sizes, a deterministic rule).
  const auto worker_of = analysis::pack_groups(g.group_size, W);
  std::vector<std::int64_t> load(static_cast<std::size_t>(W), 0);
  for (std::size_t k = 0; k < g.group_size.size(); ++k) load[static_cast<std::size_t>(worker_of[k])] += g.group_size[k];
  plan.groups = static_cast<std::int32_t>(g.group_size.size());
  const std::int64_t most = *std::max_element(load.begin(), load.end());
  plan.imbalance = n > 0 ? static_cast<double>(most) * W / static_cast<double>(n) : 1.0;
  auto hosted = std::make_shared<HostedSpace>();
  std::vector<std::int32_t> thread(static_cast<std::size_t>(space.local_nnz));
  hosted->host_of.resize(thread.size());
  for (std::size_t i = 0; i < thread.size(); ++i) {
    const std::int32_t w = worker_of[static_cast<std::size_t>(g.group_of[i])];
    hosted->host_of[i] = w / T;
    thread[i] = w % T;
  }
  std::vector<std::int32_t> thread_of = host_first(*hosted, space, thread);
  std::vector<std::uint8_t> wrote;  // per place of `table`: this rank's hosted iterations wrote it when planned
  hosted->units = planned_units(comm, table, accesses, units, hosted->host_of, wrote);
  strata::detail::free_now(accesses);
  strata::detail::free_now(units);
  // Each call, summed over ranks: of every array read or written in place, the needed
  // units a rank asks of other owners (its number, then the unit) and, of those it
  // wrote when planned, the number announced, then the number and the unit back; an
  // array read in place the table does not track, whole to every other rank. Numbers
  // travel as runs (src/array/piece_runs.hpp): about 2 bytes each.
  constexpr std::int64_t kNumberBytes = 2;
  std::int64_t bytes = 0;
  for (const auto& role : plan.roles) {
    if (role.written || !role.read) continue;
    if (units_of(hosted.get(), role.array_id)) continue;  // travels by units (below)
    if (const auto* a = strata::detail::ArrayBase::find_array(role.array_id)) {
      std::int64_t whole_bytes = static_cast<std::int64_t>(a->element_size());
      for (const auto e : a->shape_vector()) whole_bytes *= e;
      bytes += rt.rank() == 0 ? whole_bytes * (plan.ranks - 1) : 0;
    }
  }
  for (std::size_t k = 0; k < hosted->units.size(); ++k) {
    const auto& u = hosted->units[k];
    const auto* a = strata::detail::ArrayBase::find_array(u.array_id);
    const auto unit_bytes = static_cast<std::int64_t>(u.unit_elems * a->element_size());
    std::vector<std::int64_t> index(static_cast<std::size_t>(a->dimension_count()));
    for (const auto unit : u.needed)
      if (owner_of_unit(*a, unit, u.unit_elems, index) != rt.rank())
        bytes += kNumberBytes + unit_bytes + (wrote[table.place_of(k, unit)] ? 2 * kNumberBytes + unit_bytes : 0);
  }
  plan.bytes_per_pass = comm.allreduce(bytes, ReduceOp::sum);
  plan.hosted = std::move(hosted);
  return thread_of;
}

bool refresh_hosted(HostedSpace& hosted, const SpaceView& space) {
  const bool mine = local_fingerprint(space) != hosted.source_fingerprint;
  if (space.rt->comm().allreduce(std::int64_t{mine}, ReduceOp::max) == 0) return false;
  // The same iterations arrive in the same order: only their elements change.
  const Arrived a = send_to_hosts(hosted, space, nullptr);
  const std::size_t es = space.elem_size;
  for (std::size_t k = 0; k < hosted.arrival.size(); ++k)
    std::memcpy(hosted.values.data() + k * es, a.values.data() + static_cast<std::size_t>(hosted.arrival[k]) * es, es);
  hosted.source_fingerprint = local_fingerprint(space);
  return true;
}

SpaceView run_view(const Plan& plan, const SpaceView& given) {
  const SpaceView real = given.refreshed();
  return plan.hosted ? plan.hosted->view(real) : real;
}

void make_absent_units(const Plan& plan, OwnershipTable& table, int rank) {
  for (std::size_t k = 0; k < table.tracked_arrays(); ++k) {
    const HostedSpace::Units* planned = units_of(plan, table.array_id(k));
    if (!planned) continue;
    const auto* a = strata::detail::ArrayBase::find_array(planned->array_id);
    std::vector<std::int64_t> index(static_cast<std::size_t>(a->dimension_count()));
    // Where the partition keeps rows whole, a unit's first element tells its owner;
    // where it cuts them (the last dimension partitioned, by range or hash), every
    // element must be this rank's.
    const bool cuts_rows = planned->unit_elems > 1 && strata::detail::partition_cuts_rows(a->distribution_of());
    // How many of the unit's elements are this rank's: all, some or none.
    enum class Share { all, some, none };
    const auto share = [&](std::uint64_t unit) {
      if (!cuts_rows) return owner_of_unit(*a, unit, planned->unit_elems, index) == rank ? Share::all : Share::none;
      std::size_t own = 0;
      for (std::size_t e = 0; e < planned->unit_elems; ++e)
        own += owner_of_unit(*a, unit * planned->unit_elems + e, 1, index) == rank ? 1 : 0;
      return own == planned->unit_elems ? Share::all : own > 0 ? Share::some : Share::none;
    };
    std::size_t next = 0;  // into the ascending needed list
    table.for_each_unit_of(k, [&](std::uint64_t unit, std::size_t place) {
      while (next < planned->needed.size() && planned->needed[next] < unit) ++next;
      const bool needed = next < planned->needed.size() && planned->needed[next] == unit;
      const Share mine = share(unit);
      // A unit with none of its elements here: fetched (its writes need no undoing
      // here: they go back to their owners only after a run that holds) or absent.
      if (needed && mine == Share::none) table.make_borrowed(place);
      if (!needed && mine != Share::all) table.make_absent(place);
    });
  }
}

CallCopies::CallCopies(const Plan& plan, bool whole) : plan_(plan) {
  try {
    for (const auto& role : plan.roles) {
      if (!role.read && !role.written) continue;
      auto* a = strata::detail::ArrayBase::find_array(role.array_id);
      if (!a) continue;
      const HostedSpace::Units* units = whole ? nullptr : units_of(plan, role.array_id);
      lent_.emplace_back();
      // Owners note the borrowers of units the loop may write (the merge checks them).
      if (units) a->travel_begin_units(units->needed, units->unit_elems, role.written ? &lent_.back() : nullptr);
      else a->travel_begin();
      arrays_.push_back(a);
      // Sorted by unit: the merge looks up who borrowed a unit.
      std::sort(lent_.back().begin(), lent_.back().end(), [](const auto& x, const auto& y) {
        return x.unit != y.unit ? x.unit < y.unit : x.to < y.to;
      });
    }
  } catch (...) {  // those copied go back to their parts (the destructor will not run)
    for (auto* a : arrays_) a->travel_drop();
    throw;
  }
}

CallCopies::~CallCopies() {
  for (auto* a : arrays_) a->travel_drop();
}

std::string CallCopies::merge(Runtime& rt, const OwnershipTable& table) {
  // A rank touched only units it holds for the call (its part, and those it fetched:
  // the claims refuse the rest), so every rank that touched a unit is its owner or a
  // rank it lent the unit to. The owner finds every unit one rank wrote and another
  // touched: its own writes of units it lent, and units announced by one borrower that
  // another borrowed or the owner touched. Only when no owner finds one do the bytes
  // travel: a refused run leaves every part as its own rank's run left it, which its
  // write logs or snapshot undo.
  std::string conflict;
  struct Written {
    strata::detail::ArrayBase* array;
    std::size_t unit_elems;
    std::vector<std::uint64_t> units;
  };
  std::vector<Written> written;
  for (std::size_t k = 0; k < table.tracked_arrays(); ++k) {
    const HostedSpace::Units* planned = units_of(plan_, table.array_id(k));
    if (!planned || table.read_only(k)) continue;  // fetched units of a read-only array are dropped
    auto* a = strata::detail::ArrayBase::find_array(table.array_id(k));
    const auto at = static_cast<std::size_t>(std::find(arrays_.begin(), arrays_.end(), a) - arrays_.begin());
    STRATA_CHECK(at < arrays_.size(), "a written array of a spread plan did not travel for the call");
    const std::vector<strata::detail::LentUnit>& lent = lent_[at];
    const auto borrowers = [&](std::uint64_t unit) {
      return std::equal_range(lent.begin(), lent.end(), strata::detail::LentUnit{unit, 0},
                              [](const auto& x, const auto& y) { return x.unit < y.unit; });
    };
    // Keeps the first unit one rank wrote and another touched.
    const auto refuse = [&](const std::string& what) {
      if (conflict.empty())
        conflict = what + " in the same call: the conflict groups recorded when the loop was planned no longer hold";
    };
    for (const auto& l : lent)
      if (table.seen_at(table.place_of(k, l.unit)) & strata::detail::ClaimView::written)
        refuse(fmt::format("{} written on rank {} (its owner) was lent to rank {}", unit_label(table, k, l.unit),
                           rt.rank(), l.to));
    Written w{a, planned->unit_elems, {}};
    table.for_each_unit_of(k, [&](std::uint64_t unit, std::size_t place) {
      if (table.seen_at(place) & strata::detail::ClaimView::written) w.units.push_back(unit);
    });
    const auto announced = strata::detail::announce_units(rt.comm(), a->distribution_of(), w.unit_elems, w.units);
    for (const auto& [unit, from] : announced) {
      if (table.seen_at(table.place_of(k, unit)) != 0)
        refuse(fmt::format("{} written on rank {} was touched on rank {} (its owner)", unit_label(table, k, unit), from,
                           rt.rank()));
      const auto [lo, hi] = borrowers(unit);
      for (auto b = lo; b != hi; ++b)
        if (b->to != from)
          refuse(fmt::format("{} written on rank {} was touched on rank {}", unit_label(table, k, unit), from, b->to));
    }
    written.push_back(std::move(w));
  }
  conflict = first_failure(rt, {conflict});
  if (!conflict.empty()) return conflict;
  for (const Written& w : written)
    strata::detail::return_dense_units(rt.comm(), w.array->distribution_of(), w.array->element_size(), w.unit_elems,
                                       w.units, w.array->local_bytes());
  return "";
}

}  // namespace detail
}  // namespace strata::loop
