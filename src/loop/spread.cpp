// Conflict groups spread over every rank (loop/spread.hpp).
#include "loop/spread.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/conflict_groups.hpp"
#include "loop/loop_internal.hpp"
#include "loop/ownership.hpp"
#include "loop/split_groups.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::loop {

detail::SpaceView HostedSpace::view(const detail::SpaceView& real) const {
  detail::SpaceView v = real;
  v.sparse = true;
  v.box = nullptr;
  v.local_nnz = static_cast<std::int64_t>(whole_positions.size());
  v.keys = {reinterpret_cast<const std::byte*>(keys.data()), v.local_nnz, v.dims, 8};
  v.values = const_cast<std::byte*>(values.data());  // never written: spread bodies take elements by value
  return v;
}

namespace detail {
namespace {

std::uint64_t local_fingerprint(const SpaceView& space) {
  return fingerprint({space.values, static_cast<std::size_t>(space.local_nnz) * space.elem_size});
}

// Collective: the whole space in key order, on every rank.
HostedSpace host_whole(const SpaceView& space) {
  const auto dims = static_cast<std::size_t>(space.dims);
  const std::size_t es = space.elem_size;
  std::vector<std::int64_t> mine(static_cast<std::size_t>(space.local_nnz) * dims);
  for (std::int64_t pos = 0; pos < space.local_nnz; ++pos)
    index_at(space, pos, &mine[static_cast<std::size_t>(pos) * dims]);
  Comm& comm = space.rt->comm();
  std::vector<std::int64_t> keys = comm.allgather_vector(std::move(mine));
  std::vector<Bytes> parts = comm.allgatherv({space.values, static_cast<std::size_t>(space.local_nnz) * es});
  std::vector<std::byte> values = Comm::concatenated<std::byte>(parts);
  const std::size_t n = keys.size() / std::max<std::size_t>(dims, 1);
  HostedSpace h;
  h.source_fingerprint = local_fingerprint(space);
  h.whole_positions.resize(n);
  std::iota(h.whole_positions.begin(), h.whole_positions.end(), 0);
  auto key = [&](std::size_t p) { return keys.data() + p * dims; };
  auto before = [&](std::int64_t a, std::int64_t b) {
    return std::lexicographical_compare(key(static_cast<std::size_t>(a)), key(static_cast<std::size_t>(a)) + dims,
                                        key(static_cast<std::size_t>(b)), key(static_cast<std::size_t>(b)) + dims);
  };
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Ranks holding ranges of the first dimension give key order already.
  if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  h.keys.resize(keys.size());
  h.values.resize(values.size());
  for (std::size_t k = 0; k < n; ++k) {
    const auto from = static_cast<std::size_t>(order[k]);
    std::copy_n(key(from), dims, h.keys.data() + k * dims);
    std::memcpy(h.values.data() + k * es, values.data() + from * es, es);
  }
  return h;
}

// The hosted iterations at `positions` (ascending places in `whole`).
void keep_only(HostedSpace& h, const HostedSpace& whole, std::vector<std::int64_t> positions, std::size_t dims,
               std::size_t es) {
  h.keys.resize(positions.size() * dims);
  h.values.resize(positions.size() * es);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const auto from = static_cast<std::size_t>(positions[k]);
    std::copy_n(whole.keys.data() + from * dims, dims, h.keys.data() + k * dims);
    std::memcpy(h.values.data() + k * es, whole.values.data() + from * es, es);
  }
  h.whole_positions = std::move(positions);
  h.source_fingerprint = whole.source_fingerprint;
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

// Per array the loop reads or writes in place: the units this rank's iterations
// touched when planned (HostedSpace::Units), and which of them they wrote. `units` holds the
// place (table.unit_of) of every access, `rank_of` every iteration's rank.
std::vector<HostedSpace::Units> planned_units(const OwnershipTable& table,
                                              const std::vector<analysis::ElementAccess>& accesses,
                                              const std::vector<std::uint64_t>& units,
                                              const std::vector<std::int32_t>& rank_of, int rank,
                                              std::vector<std::uint8_t>& wrote) {
  std::vector<std::uint8_t> mine(table.units(), 0);
  wrote.assign(table.units(), 0);
  for (std::size_t k = 0; k < accesses.size(); ++k) {
    const std::uint64_t place = units[k];
    if (place == OwnershipTable::kNoUnit) continue;  // an array the table does not track
    if (rank_of[static_cast<std::size_t>(accesses[k].iteration)] != rank) continue;
    mine[place] = 1;
    wrote[place] |= accesses[k].write ? 1 : 0;
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
                                                       const std::vector<std::uint64_t>& row_keyed) {
  Runtime& rt = *space.rt;
  const int T = plan.threads, W = plan.workers;
  const HostedSpace whole = host_whole(space);
  const SpaceView all = whole.view(space);
  const std::int64_t n = all.local_nnz;
  std::vector<analysis::ElementAccess> accesses;
  std::vector<std::uint64_t> units;  // per access, its unit in `table` (kNoUnit: an array only read)
  // Numbers the units of the arrays the loop reads or writes in place.
  const OwnershipTable table(plan, /*track_reads=*/true);
  {
    // Subscripts may depend on the arrays' values: the pass reads them whole.
    CallCopies copies(plan, /*whole=*/true);
    for (auto& rec : reconnoitre(all, body, true, 1, row_keyed, &table)) {
      accesses.insert(accesses.end(), rec.elements().begin(), rec.elements().end());
      units.insert(units.end(), rec.units().begin(), rec.units().end());
    }
  }
  const auto g = analysis::conflict_groups(n, accesses);
  // A group rank 0's threads would split (split_groups.cpp: above 1.1x a thread's
  // share) runs faster split there than whole on one worker.
  const std::int64_t largest = g.group_size.empty() ? 0 : *std::max_element(g.group_size.begin(), g.group_size.end());
  const bool gather = T > 1 && static_cast<double>(largest) > kSplitAbove * static_cast<double>(n) / T;
  const auto worker_of = analysis::pack_groups(g.group_size, W);
  std::vector<std::int64_t> load(static_cast<std::size_t>(W), 0), mine;
  std::vector<std::int32_t> thread_of, rank_of(static_cast<std::size_t>(n));
  std::uint64_t placement = 0;  // a hash of every iteration's worker
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t w = worker_of[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(i)])];
    ++load[static_cast<std::size_t>(w)];
    rank_of[static_cast<std::size_t>(i)] = w / T;
    placement = mix64(placement ^ static_cast<std::uint64_t>(w));
    if (w / T != rt.rank()) continue;
    mine.push_back(i);
    thread_of.push_back(w % T);
  }
  // Every rank placed the iterations by its own pass: they must agree, or an
  // iteration would run twice or nowhere (a body whose subscripts its pass cannot
  // replay, driver variables that differ between ranks). Otherwise rank 0 runs all.
  Comm& comm = rt.comm();
  const auto signed_hash = static_cast<std::int64_t>(placement >> 1);
  const bool agree = comm.allreduce(signed_hash, ReduceOp::max) == comm.allreduce(signed_hash, ReduceOp::min) &&
                     comm.allreduce(static_cast<std::int64_t>(mine.size()), ReduceOp::sum) == n;
  if (gather || !agree) return std::nullopt;
  plan.groups = g.count;
  const std::int64_t most = *std::max_element(load.begin(), load.end());
  plan.imbalance = n > 0 ? static_cast<double>(most) * W / static_cast<double>(n) : 1.0;
  auto hosted = std::make_shared<HostedSpace>();
  keep_only(*hosted, whole, std::move(mine), static_cast<std::size_t>(space.dims), space.elem_size);
  std::vector<std::uint8_t> wrote;  // per place of `table`: this rank's iterations wrote it when planned
  hosted->units = planned_units(table, accesses, units, rank_of, rt.rank(), wrote);
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
  const HostedSpace whole = host_whole(space);
  keep_only(hosted, whole, hosted.whole_positions, static_cast<std::size_t>(space.dims), space.elem_size);
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
