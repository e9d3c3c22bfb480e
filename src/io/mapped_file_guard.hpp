// The SIGBUS guard of mapped files (see strata/io/mapped_file.hpp): a fixed table of
// the address ranges of live maps, read by the signal handler without locks.
#pragma once

#include <cstddef>

namespace strata::io::detail {

/// Installs the handler (once) and records [data, data + bytes) in a free slot;
/// returns the slot, or -1 when all are taken (that map is then unguarded).
int guard_mapping(const void* data, std::size_t bytes);
/// Whether a read in the slot's range faulted (the range now ends in zero pages).
bool mapping_faulted(int slot);
/// Frees the slot; call before unmapping.
void unguard_mapping(int slot);

}  // namespace strata::io::detail
