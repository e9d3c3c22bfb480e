#include "strata/io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "io/mapped_file_guard.hpp"
#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"

namespace strata::io {

const char* file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, possibly
// forever; it has no effect on regular files. Only regular files are mapped: a
// stream cannot be, and reading it would consume it.
MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("cannot read '{}': {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(fmt::format("cannot read '{}': it is {}, not a regular file", path, file_kind(st.st_mode)));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("cannot map '{}': {}", path, std::strerror(err)));
    }
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(p);
    slot_ = detail::guard_mapping(data_, size_);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  detail::unguard_mapping(slot_);
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::check_unchanged() const {
  if (detail::mapping_faulted(slot_))
    throw IoError(fmt::format("'{}' was truncated while being read (it had {} bytes); nothing was loaded", path_,
                              size_));
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && static_cast<std::size_t>(st.st_size) != size_)
    throw IoError(fmt::format("'{}' changed size while being read (from {} to {} bytes); nothing was loaded", path_,
                              size_, st.st_size));
}

void MappedFile::release(std::size_t begin, std::size_t end) const {
  if (data_ && end > begin) strata::detail::drop_pages(data_ + begin, end - begin);
}

std::pair<std::size_t, std::size_t> snap_to_lines(std::string_view text, std::size_t begin, std::size_t end,
                                                  std::size_t region_begin) {
  // A position p snaps to the start of the first line that begins at or after p.
  auto snap = [&](std::size_t p) -> std::size_t {
    if (p <= region_begin) return region_begin;
    if (p >= text.size()) return text.size();
    if (text[p - 1] == '\n') return p;
    const std::size_t nl = text.find('\n', p);
    return nl == std::string_view::npos ? text.size() : nl + 1;
  };
  return {snap(begin), snap(end)};
}

std::pair<std::size_t, std::size_t> line_share(std::string_view text, std::size_t begin, std::size_t end,
                                               std::size_t part, std::size_t parts) {
  const std::size_t n = end - begin;
  return snap_to_lines(text, begin + n * part / parts, begin + n * (part + 1) / parts, begin);
}

}  // namespace strata::io
