#include "strata/io/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::detail {
namespace fs = std::filesystem;

namespace {

class Fd {
 public:
  Fd(const fs::path& p, int flags, const char* what) : Fd(::open(p.c_str(), flags | O_CLOEXEC, 0644), p, what) {}
  /// Takes an open()'s result.
  Fd(int fd, const fs::path& p, const char* what) : fd_(fd) {
    if (fd_ < 0)
      throw IoError(fmt::format("cannot {} {}: {}", what, p.string(), errno_text(errno)));
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void sync(const fs::path& p) const {
    if (::fsync(fd_) != 0)
      throw IoError(fmt::format("cannot fsync {}: {}", p.string(), errno_text(errno)));
  }
  void close(const fs::path& p) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      throw IoError(fmt::format("cannot close {}: {}", p.string(), errno_text(errno)));
  }

 private:
  int fd_;
};

// Writes all of `data` at the file's position. Returns false when the kernel refuses
// the first write with EINVAL, as it does for O_DIRECT writes its device cannot take;
// throws IoError on any other failure.
bool write_all(const Fd& fd, const fs::path& p, std::span<const std::byte> data) {
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::write(fd.get(), data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && at == 0) return false;
    if (n < 0) throw IoError(fmt::format("cannot write {}: {}", p.string(), errno_text(errno)));
    at += static_cast<std::size_t>(n);
  }
  return true;
}

void write_through_cache(const Fd& fd, const fs::path& p, std::span<const std::byte> data) {
  if (!write_all(fd, p, data))
    throw IoError(fmt::format("cannot write {}: {}", p.string(), errno_text(EINVAL)));
}

void stop_direct_io(const Fd& fd, const fs::path& p) {
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_DIRECT) != 0)
    throw IoError(fmt::format("cannot change the write mode of {}: {}", p.string(), errno_text(errno)));
}

// Unlinks whatever is at `p` (unlink never follows a symlink); a missing name is fine.
void remove_stale(const fs::path& p) {
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    throw IoError(fmt::format("cannot replace {}: {}", p.string(), errno_text(errno)));
}

// open() of a name remove_stale has just freed: -1 with errno when it fails.
int open_exclusive(const fs::path& p, int extra_flags) {
  return ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, 0644);
}

}  // namespace

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

int create_new_file(const fs::path& p, int extra_flags) {
  remove_stale(p);
  const int fd = open_exclusive(p, extra_flags);
  if (fd < 0) throw IoError(fmt::format("cannot create {}: {}", p.string(), errno_text(errno)));
  return fd;
}

void write_file_replacing(const fs::path& path, std::span<const std::byte> data, bool sync) {
  fs::path tmp = path;
  tmp += ".tmp";
  try {
    Fd fd(create_new_file(tmp), tmp, "create");
    write_through_cache(fd, tmp, data);
    if (sync) fd.sync(tmp);
    fd.close(tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw IoError(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), errno_text(errno)));
  } catch (const IoError& e) {
    ::unlink(tmp.c_str());  // never follows a link: at worst it removes one planted there
    throw IoError(fmt::format("cannot write {} ({})", path.string(), e.what()));
  }
  if (sync) sync_dir(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

void write_file_replacing(const fs::path& path, std::string_view text, bool sync) {
  write_file_replacing(path, std::as_bytes(std::span(text.data(), text.size())), sync);
}

void write_file_synced(const fs::path& p, std::span<const std::byte> data) {
  Fd fd(create_new_file(p), p, "create");
  write_through_cache(fd, p, data);
  fd.sync(p);
  fd.close(p);
}

void write_file_synced_direct(const fs::path& p, std::span<const std::byte> data) {
  const std::size_t bulk = data.size() / kDirectIoAlignment * kDirectIoAlignment;
  if (reinterpret_cast<std::uintptr_t>(data.data()) % kDirectIoAlignment != 0 || bulk < (std::size_t{1} << 20)) {
    write_file_synced(p, data);
    return;
  }
  remove_stale(p);
  const int raw = open_exclusive(p, O_DIRECT);
  if (raw < 0 && errno == EINVAL) {  // a file system without O_DIRECT (write_file_synced removes what it created)
    write_file_synced(p, data);
    return;
  }
  Fd fd(raw, p, "create");
  std::size_t done = 0;
  if (write_all(fd, p, data.first(bulk))) done = bulk;  // else a device that wants larger blocks
  stop_direct_io(fd, p);  // the tail is less than a block (and a refused bulk goes this way too)
  write_through_cache(fd, p, data.subspan(done));
  fd.sync(p);
  fd.close(p);
}

void sync_dir(const fs::path& dir) {
  Fd fd(dir, O_RDONLY | O_DIRECTORY, "open directory");
  fd.sync(dir);
}

// Reads up to `limit` bytes; returns fewer when the file is shorter.
Bytes read_file(const fs::path& p, std::uint64_t limit, Links links) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
  const int flags = O_RDONLY | O_NONBLOCK | (links == Links::refuse ? O_NOFOLLOW : 0);
  const int raw = ::open(p.c_str(), flags | O_CLOEXEC);
  if (raw < 0 && errno == ELOOP && links == Links::refuse)
    throw IoError(fmt::format("cannot read {}: it is a symbolic link, which is not followed here", p.string()));
  Fd fd(raw, p, "open");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw IoError(fmt::format("cannot stat {}: {}", p.string(), errno_text(errno)));
  if (!S_ISREG(st.st_mode))
    throw IoError(fmt::format("cannot read {}: {}", p.string(),
                              S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file"));
  // Sized by what the file holds, not by `limit` alone: a limit taken from a damaged
  // manifest must not allocate more than the file has (plus one byte, to see growth).
  const auto room = std::min<std::uint64_t>(limit, static_cast<std::uint64_t>(st.st_size) + 1);
  Bytes out(static_cast<std::size_t>(room));
  std::size_t at = 0;
  while (at < out.size()) {
    const ssize_t n = ::read(fd.get(), out.data() + at, out.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(fmt::format("cannot read {}: {}", p.string(), errno_text(errno)));
    if (n == 0) break;
    at += static_cast<std::size_t>(n);
  }
  out.resize(at);
  return out;
}

}  // namespace strata::detail
