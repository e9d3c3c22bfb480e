// Conflict groups spread over every rank (loop/spread.hpp).
#include "strata/detail/free_now.hpp"
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

// "emb[17, :]" or "count[5]": how a conflict names a unit.
std::string unit_label(const OwnershipTable::WrittenUnits& w, std::uint64_t unit) {
  const auto* a = strata::detail::ArrayBase::find_array(w.array_id);
  auto shape = a->shape_vector();
  if (w.by_row) shape.pop_back();
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<std::int64_t>(unit % static_cast<std::uint64_t>(shape[d]));
    unit /= static_cast<std::uint64_t>(shape[d]);
  }
  return fmt::format("{}[{}{}]", strata::detail::array_label(*a), fmt::join(index, ", "), w.by_row ? ", :" : "");
}

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
  {
    // Subscripts may depend on the arrays' values: the pass reads them whole.
    WholeCopies copies(plan);
    for (auto& rec : reconnoitre(all, body, true, 1, row_keyed))
      accesses.insert(accesses.end(), rec.elements().begin(), rec.elements().end());
  }
  const auto g = analysis::conflict_groups(n, accesses);
  strata::detail::free_now(accesses);
  // A group rank 0's threads would split (split_groups.cpp: above 1.1x a thread's
  // share) runs faster split there than whole on one worker.
  const std::int64_t largest = g.group_size.empty() ? 0 : *std::max_element(g.group_size.begin(), g.group_size.end());
  const bool gather = T > 1 && static_cast<double>(largest) > kSplitAbove * static_cast<double>(n) / T;
  const auto worker_of = analysis::pack_groups(g.group_size, W);
  std::vector<std::int64_t> load(static_cast<std::size_t>(W), 0), mine;
  std::vector<std::int32_t> thread_of;
  std::uint64_t placement = 0;  // a hash of every iteration's worker
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t w = worker_of[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(i)])];
    ++load[static_cast<std::size_t>(w)];
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
  plan.hosted = std::move(hosted);
  // Each call, summed over ranks: every rank's part of each touched array to every
  // other rank, and (at most) every unit of a written array to every other rank.
  plan.bytes_per_pass = 0;
  for (const auto& role : plan.roles)
    if (role.read || role.written)
      if (const auto* a = strata::detail::ArrayBase::find_array(role.array_id)) {
        std::int64_t bytes = static_cast<std::int64_t>(a->element_size());
        for (const auto e : a->shape_vector()) bytes *= e;
        plan.bytes_per_pass += bytes * (plan.ranks - 1) * (role.written ? 2 : 1);  // at most: every unit written
      }
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

WholeCopies::WholeCopies(const Plan& plan) {
  try {
    for (const auto& role : plan.roles)
      if (role.read || role.written)
        if (auto* a = strata::detail::ArrayBase::find_array(role.array_id)) {
          a->travel_begin();
          arrays_.push_back(a);
        }
  } catch (...) {  // those copied go back to their parts (the destructor will not run)
    for (auto* a : arrays_) a->travel_drop();
    throw;
  }
}

WholeCopies::~WholeCopies() {
  for (auto* a : arrays_) a->travel_drop();
}

std::string WholeCopies::merge(Runtime& rt, const OwnershipTable& table) {
  // Mine, per tracked array: the count of units, the units, then their bytes.
  const auto written = table.written_units();
  Bytes mine;
  auto put = [&](const void* p, std::size_t bytes) {
    const auto* b = static_cast<const std::byte*>(p);
    mine.insert(mine.end(), b, b + bytes);
  };
  for (const auto& w : written) {
    const auto count = static_cast<std::uint64_t>(w.units.size());
    put(&count, sizeof count);
    put(w.units.data(), w.units.size() * sizeof(std::uint64_t));
    const auto bytes = strata::detail::ArrayBase::find_array(w.array_id)->local_bytes();
    for (const auto u : w.units) put(bytes.data() + u * w.unit_bytes, w.unit_bytes);
  }
  std::vector<Bytes> parts = rt.comm().allgatherv(mine);
  std::string conflict;
  for (int q = 0; q < rt.size(); ++q) {
    if (q == rt.rank()) continue;
    const Bytes& part = parts[static_cast<std::size_t>(q)];
    std::size_t at = 0;
    for (std::size_t k = 0; k < written.size(); ++k) {
      std::uint64_t count;
      std::memcpy(&count, part.data() + at, sizeof count);
      at += sizeof count;
      const std::byte* units = part.data() + at;
      const std::byte* values = units + count * sizeof(std::uint64_t);
      const std::size_t ub = written[k].unit_bytes;
      const auto bytes = strata::detail::ArrayBase::find_array(written[k].array_id)->local_bytes();
      for (std::uint64_t j = 0; j < count; ++j) {
        std::uint64_t u;
        std::memcpy(&u, units + j * sizeof u, sizeof u);
        if (conflict.empty() && table.touched(k, u))
          conflict = fmt::format("{} written on rank {} was touched on rank {} in the same call: the conflict groups "
                                 "recorded when the loop was planned no longer hold",
                                 unit_label(written[k], u), q, rt.rank());
        std::memcpy(bytes.data() + u * ub, values + j * ub, ub);
      }
      at += count * (sizeof(std::uint64_t) + ub);
    }
  }
  return first_failure(rt, {conflict});
}

}  // namespace detail
}  // namespace strata::loop
