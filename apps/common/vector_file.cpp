#include "common/vector_file.hpp"

#include <cstdio>
#include <iterator>
#include <memory>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::apps {

void write_vectors(const std::string& path, const std::vector<std::string>& names, const std::vector<float>& values,
                   int dim) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw IoError(fmt::format("{}: cannot be written", path));
  fmt::print(f.get(), "{} {}\n", names.size(), dim);
  std::string line;
  for (std::size_t r = 0; r < names.size(); ++r) {
    line = names[r];
    for (int j = 0; j < dim; ++j)
      fmt::format_to(std::back_inserter(line), " {}",
                     values[r * static_cast<std::size_t>(dim) + static_cast<std::size_t>(j)]);
    line += '\n';
    if (std::fputs(line.c_str(), f.get()) < 0) throw IoError(fmt::format("{}: write failed", path));
  }
  if (std::fflush(f.get()) != 0) throw IoError(fmt::format("{}: write failed", path));
}

}  // namespace strata::apps
