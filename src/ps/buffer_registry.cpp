// The per-process registry of Buffers by the id of the array they write: parallel_for
// looks up the buffers a loop wrote through and flushes them when the loop ends.
#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/ps/buffer_base.hpp"

namespace strata::detail {
namespace {
std::mutex g_mu;
std::unordered_map<std::uint64_t, BufferBase*>& registry() {
  static std::unordered_map<std::uint64_t, BufferBase*> r;
  return r;
}
}  // namespace

BufferBase::BufferBase(std::uint64_t array_id) : array_id_(array_id) {
  std::lock_guard lock(g_mu);
  auto [it, fresh] = registry().emplace(array_id, this);
  if (!fresh)
    throw OptionError(fmt::format("array #{} already has a Buffer; one Buffer per array", array_id));
}

BufferBase::~BufferBase() {
  std::lock_guard lock(g_mu);
  auto it = registry().find(array_id_);
  if (it != registry().end() && it->second == this) registry().erase(it);
}

CheckpointSnapshot BufferBase::owner_state_snapshot(std::vector<std::byte> /*storage*/) {
  throw InternalError(fmt::format("array #{}: its Buffer keeps no owner state to checkpoint", array_id_));
}

BufferBase* BufferBase::find_buffer(std::uint64_t array_id) {
  std::lock_guard lock(g_mu);
  auto it = registry().find(array_id);
  return it == registry().end() ? nullptr : it->second;
}

}  // namespace strata::detail
