// Access to the process-wide Runtime from tests, and a failure printer for ranks > 0.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "strata/random.hpp"
#include "strata/runtime.hpp"

namespace strata::testing {

extern Runtime* g_runtime;
inline Runtime& rt() { return *g_runtime; }

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] FAILED %s:%d\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

/// A scratch directory shared by all ranks of this test (same name everywhere), removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// A pseudo-random slot in [0, slots) for index i: the hot, irregular subscripts the
/// loop and parameter-server tests write to. `salt` picks another mapping.
inline std::int64_t hashed_slot(std::int64_t i, std::int64_t slots, std::uint64_t salt = 0) {
  return static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(i) + salt) % static_cast<std::uint64_t>(slots));
}

}  // namespace strata::testing
