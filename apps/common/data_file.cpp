#include "common/data_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"

namespace strata::apps {

void check_data_file(const std::string& path, const std::string& what, const std::string& option) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw IoError(fmt::format("{}: cannot open {} '{}': {}", option, what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw OptionError(fmt::format("{}: '{}' is {}, not a regular file (the data is mapped into memory and "
                                  "read in parallel; write a stream to a file first)",
                                  option, path, io::file_kind(st.st_mode)));
}

double holdout_fraction(const RunConfig& c) {
  const double holdout = c.options.real("holdout", 0.0, 0.9);
  if (c.options.text("test").empty()) return holdout;
  // The default 0.1 gives way to --test; a --holdout the user wrote does not.
  if (holdout > 0 && c.options.text("holdout") != "0.1")
    throw OptionError("--holdout and --test both say what to measure on: give one of them");
  return 0;
}

}  // namespace strata::apps
