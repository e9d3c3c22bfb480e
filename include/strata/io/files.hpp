// Whole-file writes that survive a crash (written, fsynced, closed, every error an
// IoError naming the path) and bounded reads: what checkpoints are made of.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "strata/comm.hpp"
#include "strata/error.hpp"

namespace strata::detail {

/// Creates or truncates `p`, writes `data`, fsyncs and closes it.
void write_file_synced(const std::filesystem::path& p, std::span<const std::byte> data);

/// The alignment, in memory and in length, of what write_file_synced_direct hands to
/// the disk directly.
inline constexpr std::size_t kDirectIoAlignment = 4096;

/// write_file_synced for large buffers. When `data` starts on a kDirectIoAlignment
/// boundary, its whole blocks go from memory to the disk directly (O_DIRECT): they
/// take no page-cache memory and no copy, which on some machines (virtual ones that
/// hand freed memory back to the host) costs more CPU than the rest of the write.
/// The tail, small or unaligned buffers, and file systems without O_DIRECT (tmpfs
/// before Linux 6.6) go through the page cache as usual.
void write_file_synced_direct(const std::filesystem::path& p, std::span<const std::byte> data);

/// fsyncs a directory, so the names created or renamed in it are durable.
void sync_dir(const std::filesystem::path& dir);

/// Reads up to `limit` bytes of `p`; fewer when the file is shorter.
Bytes read_file(const std::filesystem::path& p, std::uint64_t limit);

/// strerror as a std::string.
std::string errno_text(int err);

/// Runs f, turning any non-Strata exception (std::filesystem_error, bad_alloc) into E,
/// so that all_or_none sees it and no rank is left waiting.
template <class E, class F>
void typed(F&& f) {
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw E(e.what());
  }
}

}  // namespace strata::detail
