#include "common/data_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps {

namespace {

const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

void check_data_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(fmt::format("--data: cannot open {} '{}': {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw OptionError(fmt::format("--data: '{}' is {}, not a regular file (the data is mapped into memory and "
                                  "read in parallel; write a stream to a file first)",
                                  path, kind_of_file(st.st_mode)));
}

}  // namespace strata::apps
