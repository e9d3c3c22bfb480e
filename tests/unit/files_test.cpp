// write_file_synced_direct: whatever the buffer's alignment and length, on the build
// tree's file system and on tmpfs (/dev/shm, which refuses O_DIRECT before Linux 6.6),
// the file holds exactly the buffer's bytes, also when it replaces a longer file; a
// file that cannot be created is an IoError naming it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "strata/error.hpp"
#include "strata/io/files.hpp"

namespace strata::detail {
namespace {
namespace fs = std::filesystem;

// A buffer of `size` bytes starting `offset` bytes after a 4 KiB boundary.
struct Placed {
  std::vector<std::byte> storage;
  std::span<const std::byte> bytes;
};

Placed placed(std::size_t size, std::size_t offset) {
  Placed p;
  p.storage.resize(size + offset + kDirectIoAlignment);
  const auto address = reinterpret_cast<std::uintptr_t>(p.storage.data());
  const std::size_t pad = (kDirectIoAlignment - address % kDirectIoAlignment) % kDirectIoAlignment;
  for (std::size_t i = 0; i < p.storage.size(); ++i) p.storage[i] = static_cast<std::byte>((i * 131 + 7) % 251);
  p.bytes = std::span<const std::byte>(p.storage).subspan(pad + offset, size);
  return p;
}

void expect_file_holds(const fs::path& file, std::span<const std::byte> want) {
  const Bytes got = read_file(file, want.size() + 1);
  ASSERT_EQ(got.size(), want.size()) << file;
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << file;
}

class DirectWrite : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::path(GetParam()) / ("strata-files-test-" + std::to_string(::getpid()));
    if (!fs::exists(fs::path(GetParam()))) GTEST_SKIP() << GetParam() << " does not exist here";
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path dir_;
};

TEST_P(DirectWrite, FileHoldsExactlyTheBuffer) {
  const std::size_t mib = std::size_t{1} << 20;
  struct Case {
    std::size_t size, offset;
  };
  // Aligned with a tail, aligned whole blocks, unaligned, below the 1 MiB threshold,
  // and empty.
  for (const Case c : {Case{3 * mib + 123, 0}, Case{2 * mib, 0}, Case{2 * mib + 5, 16}, Case{4096 * 3 + 1, 0},
                       Case{0, 0}}) {
    const Placed p = placed(c.size, c.offset);
    const fs::path file = dir_ / ("f-" + std::to_string(c.size) + "-" + std::to_string(c.offset));
    write_file_synced_direct(file, p.bytes);
    expect_file_holds(file, p.bytes);
    // Rewriting a longer file with a shorter buffer truncates it.
    const Placed shorter = placed(c.size / 2, c.offset);
    write_file_synced_direct(file, shorter.bytes);
    expect_file_holds(file, shorter.bytes);
  }
}

TEST_P(DirectWrite, MissingDirectoryIsAnIoErrorNamingTheFile) {
  const Placed p = placed(std::size_t{2} << 20, 0);
  const fs::path file = dir_ / "no-such-dir" / "part.bin";
  try {
    write_file_synced_direct(file, p.bytes);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

// The build tree's file system and tmpfs.
INSTANTIATE_TEST_SUITE_P(FileSystems, DirectWrite, ::testing::Values(std::string("."), std::string("/dev/shm")));

}  // namespace
}  // namespace strata::detail
