// Whole-file writes that survive a crash (written, fsynced, closed, every error an
// IoError naming the path) and bounded reads: what checkpoints are made of.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "strata/comm.hpp"
#include "strata/error.hpp"

namespace strata::detail {

// Every file Strata writes is created afresh, never opened through a name someone else
// may have planted: whatever is at the name (a stale file, or a symlink pointing at a
// file the user cares about) is unlinked, which never follows a link, and the name is
// created with O_CREAT | O_EXCL | O_NOFOLLOW, so a link planted between the two steps
// makes the create fail instead of being written through.

/// Creates `p` as a new empty file for writing, as above; returns its descriptor
/// (close-on-exec). IoError naming `p` when it cannot.
int create_new_file(const std::filesystem::path& p, int extra_flags = 0);

/// Writes `data` to `path` as a whole: to `path.tmp` (created by create_new_file),
/// fsynced when `sync`, then renamed over `path`, so a reader sees the old file or the
/// new one and a symlink planted at either name is replaced, never followed. With
/// `sync` the directory is fsynced too, making the new name durable. IoError naming
/// `path` on failure; the temporary is removed.
void write_file_replacing(const std::filesystem::path& path, std::span<const std::byte> data, bool sync = true);
void write_file_replacing(const std::filesystem::path& path, std::string_view text, bool sync = true);

/// Creates `p` afresh (create_new_file), writes `data`, fsyncs and closes it. For a
/// name inside a temporary directory that is itself renamed into place (checkpoints);
/// anywhere else use write_file_replacing.
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

/// Whether a read follows a symbolic link at the path's last component. Files inside a
/// checkpoint are never links (Strata writes them), so reads there refuse one: a link
/// planted in a checkpoint could make a resume load data from outside it.
enum class Links { follow, refuse };

/// Reads up to `limit` bytes of the regular file `p`; fewer when the file is shorter.
/// IoError naming `p` for anything that is not a regular file (a directory, a FIFO,
/// which would block) and, with Links::refuse, for a symbolic link.
Bytes read_file(const std::filesystem::path& p, std::uint64_t limit, Links links = Links::follow);

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
