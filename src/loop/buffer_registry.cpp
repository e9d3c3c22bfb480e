// The per-process registry of Buffers by the id of the array they write: parallel_for
// looks up the buffers a loop wrote through and flushes them when the loop ends.
#include <fmt/format.h>

#include "runtime/registry.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "loop/buffer_base.hpp"

namespace strata::detail {

BufferBase::BufferBase(std::uint64_t array_id) : array_id_(array_id) {
  if (!registry_of<BufferBase>().enroll(this, array_id))
    throw OptionError(fmt::format("array #{} already has a Buffer; one Buffer per array", array_id));
}

BufferBase::~BufferBase() { registry_of<BufferBase>().withdraw(this, array_id_); }

CheckpointSnapshot BufferBase::owner_state_snapshot(std::vector<std::byte> /*storage*/) {
  throw InternalError(fmt::format("array #{}: its Buffer keeps no owner state to checkpoint", array_id_));
}

BufferBase* BufferBase::find_buffer(std::uint64_t array_id) { return registry_of<BufferBase>().find(array_id); }

}  // namespace strata::detail
