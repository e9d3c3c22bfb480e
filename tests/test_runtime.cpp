#include "test_runtime.hpp"

#include <unistd.h>

#include "strata/detail/pack.hpp"

namespace strata::testing {

TempDir::TempDir(const std::string& tag) {
  // Rank 0 picks a unique name and tells the others.
  std::uint64_t stamp = 0;
  if (rt().rank() == 0)
    stamp = (static_cast<std::uint64_t>(::getpid()) << 20) ^ static_cast<std::uint64_t>(::time(nullptr));
  rt().comm().broadcast(std::as_writable_bytes(std::span(&stamp, 1)), 0);
  path_ = std::filesystem::temp_directory_path() / ("strata-test-" + tag + "-" + std::to_string(stamp));
  if (rt().rank() == 0) std::filesystem::create_directories(path_);
  rt().comm().barrier();
}

TempDir::~TempDir() {
  try {
    rt().comm().barrier();
    if (rt().rank() == 0) std::filesystem::remove_all(path_);
  } catch (...) {
  }
}

}  // namespace strata::testing
