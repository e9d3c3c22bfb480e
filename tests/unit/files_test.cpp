// write_file_synced_direct: whatever the buffer's alignment and length, on the build
// tree's file system and on tmpfs (/dev/shm, which refuses O_DIRECT before Linux 6.6),
// the file holds exactly the buffer's bytes, also when it replaces a longer file; a
// file that cannot be created is an IoError naming it. And no write follows a symlink
// planted at the file's name or at its temporary's: the link's target stays as it was.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
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

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// A victim file, and symlinks to it planted at `names`.
struct Planted {
  fs::path victim;
  Planted(const fs::path& dir, const std::vector<fs::path>& names) : victim(dir / "victim.txt") {
    std::ofstream(victim, std::ios::binary) << "precious";
    for (const auto& n : names) fs::create_symlink(victim, n);
  }
  void expect_untouched() const {
    EXPECT_EQ(slurp(victim), "precious");
  }
};

TEST_P(DirectWrite, PlantedSymlinksAreReplacedNotFollowed) {
  const fs::path out = dir_ / "out.txt", tmp = dir_ / "out.txt.tmp";
  {
    const Planted planted(dir_, {tmp});
    write_file_replacing(out, std::string_view("new"));
    planted.expect_untouched();
    EXPECT_EQ(slurp(out), "new");
    EXPECT_FALSE(fs::is_symlink(out));
    EXPECT_FALSE(fs::exists(fs::symlink_status(tmp)));
  }
  fs::remove(out);
  fs::remove(dir_ / "victim.txt");
  {
    const Planted planted(dir_, {out, tmp});
    write_file_replacing(out, std::string_view("newer"), false);
    planted.expect_untouched();
    EXPECT_EQ(slurp(out), "newer");
    EXPECT_FALSE(fs::is_symlink(out));
  }
  fs::remove(dir_ / "victim.txt");
  // The writes into a checkpoint's temporary directory, small and large.
  const Placed big = placed(std::size_t{2} << 20, 0);
  for (const auto& [name, data] : {std::pair{"part-small", bytes_of("part")}, std::pair{"part-big", big.bytes}}) {
    for (const bool direct : {false, true}) {
      const fs::path part = dir_ / name;
      const Planted planted(dir_, {part});
      if (direct) write_file_synced_direct(part, data);
      else write_file_synced(part, data);
      planted.expect_untouched();
      EXPECT_FALSE(fs::is_symlink(part));
      expect_file_holds(part, data);
      fs::remove(part);
      fs::remove(dir_ / "victim.txt");
    }
  }
}

TEST_P(DirectWrite, StaleFilesAreReplacedAndDirectoriesRefused) {
  const fs::path out = dir_ / "out.txt";
  std::ofstream(dir_ / "out.txt.tmp") << "stale and longer than the new text";
  write_file_replacing(out, std::string_view("new"));
  EXPECT_EQ(slurp(out), "new");
  fs::create_directory(dir_ / "out.txt.tmp");
  try {
    write_file_replacing(out, std::string_view("newer"));
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(out.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(out), "new");
}

// The build tree's file system and tmpfs.
INSTANTIATE_TEST_SUITE_P(FileSystems, DirectWrite, ::testing::Values(std::string("."), std::string("/dev/shm")));

}  // namespace
}  // namespace strata::detail
