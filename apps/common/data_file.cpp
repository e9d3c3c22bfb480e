#include "common/data_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"

namespace strata::apps {

void check_data_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(fmt::format("--data: cannot open {} '{}': {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw OptionError(fmt::format("--data: '{}' is {}, not a regular file (the data is mapped into memory and "
                                  "read in parallel; write a stream to a file first)",
                                  path, io::file_kind(st.st_mode)));
}

}  // namespace strata::apps
