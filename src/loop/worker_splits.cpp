#include "loop/worker_splits.hpp"

#include <map>

#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/detail/journaled_state.hpp"

namespace strata::loop::detail {
namespace {

struct Split {
  int dim = 0;
  std::vector<std::int64_t> bounds;
};

// The process's memory of splits. Planning is collective and deterministic, so it
// is the same on every rank. It is journaled after every loop call.
class SplitMemory final : public strata::detail::JournaledState {
 public:
  std::map<std::uint64_t, Split> splits;

  Bytes journal_bytes() const override {
    Bytes out;
    strata::detail::append<std::uint64_t>(out, splits.size());
    for (const auto& [id, s] : splits) {
      strata::detail::append(out, id);
      strata::detail::append<std::int64_t>(out, s.dim);
      strata::detail::append<std::uint64_t>(out, s.bounds.size());
      strata::detail::append_span<std::int64_t>(out, s.bounds);
    }
    return out;
  }

  // Every rank journals the same memory; rank 0's copy serves any layout.
  void restore_journal(const std::vector<std::span<const std::byte>>& parts, int, bool) override {
    splits.clear();
    if (parts.empty()) return;
    strata::detail::Reader in(parts[0]);
    const auto n = in.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < n; ++k) {
      const auto id = in.get<std::uint64_t>();
      Split s;
      s.dim = static_cast<int>(in.get<std::int64_t>());
      s.bounds.resize(in.get_count(sizeof(std::int64_t)));  // bounded by the bytes left
      in.get_span(std::span(s.bounds));
      splits[id] = std::move(s);
    }
    if (in.remaining() != 0) throw CheckpointError("the journaled worker splits do not parse (another program?)");
  }
};

// Constructed before main, so it is always the first journaled state of a process.
SplitMemory g_memory;

}  // namespace

const std::vector<std::int64_t>* remembered_split(std::uint64_t array_id, int dim, std::size_t workers) {
  const auto it = g_memory.splits.find(array_id);
  if (it == g_memory.splits.end() || it->second.dim != dim || it->second.bounds.size() != workers + 1) return nullptr;
  return &it->second.bounds;
}

std::optional<int> remembered_dim(std::uint64_t array_id) {
  const auto it = g_memory.splits.find(array_id);
  if (it == g_memory.splits.end()) return std::nullopt;
  return it->second.dim;
}

void remember_split(std::uint64_t array_id, int dim, std::vector<std::int64_t> bounds) {
  // Splits of arrays that no longer exist are dropped, so a program that makes new
  // arrays every pass does not grow the memory (and its journal) without end.
  std::erase_if(g_memory.splits, [](const auto& entry) { return !strata::detail::ArrayBase::find_array(entry.first); });
  g_memory.splits[array_id] = {dim, std::move(bounds)};
}

}  // namespace strata::loop::detail
