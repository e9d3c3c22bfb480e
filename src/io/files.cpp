#include "strata/io/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::detail {
namespace fs = std::filesystem;

namespace {

class Fd {
 public:
  Fd(const fs::path& p, int flags, const char* what)
      : fd_(::open(p.c_str(), flags | O_CLOEXEC, 0644)) {
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

}  // namespace

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

void write_file_synced(const fs::path& p, std::span<const std::byte> data) {
  Fd fd(p, O_WRONLY | O_CREAT | O_TRUNC, "create");
  for (std::size_t at = 0; at < data.size();) {
    const ssize_t n = ::write(fd.get(), data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(fmt::format("cannot write {}: {}", p.string(), errno_text(errno)));
    at += static_cast<std::size_t>(n);
  }
  fd.sync(p);
  fd.close(p);
}

void sync_dir(const fs::path& dir) {
  Fd fd(dir, O_RDONLY | O_DIRECTORY, "open directory");
  fd.sync(dir);
}

// Reads up to `limit` bytes; returns fewer when the file is shorter.
Bytes read_file(const fs::path& p, std::uint64_t limit) {
  Fd fd(p, O_RDONLY, "open");
  Bytes out(static_cast<std::size_t>(limit));
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
