// Checkpoints: round trips for dense and sparse arrays, element types, dimension
// counts and partitions; atomic overwrite; paths; and detection of damaged files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>

#include "strata/io/checkpoint.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
namespace fs = std::filesystem;
using testing::rt;
using testing::TempDir;

template <class F>
std::string checkpoint_error(F&& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no CheckpointError)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Every rank can still run collectives after a failed load.
void expect_ranks_in_step() {
  EXPECT_EQ(rt().comm().allreduce(std::int64_t{1}, ReduceOp::sum), rt().size());
}

// Runs f on rank 0 only (file surgery), then waits for it.
template <class F>
void on_rank0(F&& f) {
  if (rt().rank() == 0) f();
  rt().comm().barrier();
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_text(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

TEST(Checkpoint, DenseRoundTripForEveryPartition) {
  TempDir tmp("ckpt-dense");
  for (const auto& p :
       {Partition::range(0), Partition::range(1), Partition::hash(0), Partition::block2d(0, 1)}) {
    const auto a = DistArray<float, 2>::randn(rt(), {37, 6}, 1.0, 0.0, p, 7);
    save_checkpoint(a, tmp.path() / "a");
    const auto b = load_checkpoint<float, 2>(rt(), tmp.path() / "a");
    EXPECT_FALSE(b.is_sparse());
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.partition(), p) << p.describe();
    EXPECT_EQ(b.gather(), a.gather()) << p.describe();
    // Loading into another partition than the saved one.
    const auto c = load_checkpoint<float, 2>(rt(), tmp.path() / "a", Partition::hash(1));
    EXPECT_EQ(c.partition(), Partition::hash(1));
    EXPECT_EQ(c.gather(), a.gather()) << p.describe();
  }
}

TEST(Checkpoint, ElementTypesAndDimensions) {
  TempDir tmp("ckpt-types");
  const auto i64 = DistArray<std::int64_t, 3>::generate(
      rt(), {5, 4, 3}, [](const Index<3>& i) { return i[0] * 100 + i[1] * 10 + i[2] - 7; },
      Partition::range(1));
  save_checkpoint(i64, tmp.path() / "i64");
  EXPECT_EQ((load_checkpoint<std::int64_t, 3>(rt(), tmp.path() / "i64").gather()), i64.gather());

  using Row = std::array<float, 4>;
  const auto rows = DistArray<Row, 1>::rand(rt(), {23}, -1.0, 1.0, Partition::range(0), 11);
  save_checkpoint(rows, tmp.path() / "rows");
  EXPECT_EQ((load_checkpoint<Row, 1>(rt(), tmp.path() / "rows").gather()), rows.gather());
  EXPECT_TRUE(contains(read_text(tmp.path() / "rows" / "manifest.txt"), "type=f32[4]\n"));

  const auto d4 =
      DistArray<double, 4>::randn(rt(), {3, 4, 2, 5}, 1.0, 0.0, Partition::block2d(1, 3), 3);
  save_checkpoint(d4, tmp.path() / "d4");
  const auto back = load_checkpoint<double, 4>(rt(), tmp.path() / "d4");
  EXPECT_EQ(back.partition(), Partition::block2d(1, 3));
  EXPECT_EQ(back.gather(), d4.gather());

  // An empty array survives too.
  const auto empty = DistArray<float, 2>::zeros(rt(), {0, 3});
  save_checkpoint(empty, tmp.path() / "empty");
  EXPECT_EQ((load_checkpoint<float, 2>(rt(), tmp.path() / "empty").shape()), (Shape<2>{0, 3}));
}

TEST(Checkpoint, ExplicitRangeBoundsAreKept) {
  TempDir tmp("ckpt-bounds");
  std::vector<std::int64_t> bounds{0};
  for (int r = 1; r <= rt().size(); ++r)
    bounds.push_back(r == rt().size() ? 20 : r);  // skewed on purpose
  const auto a = DistArray<float, 1>::generate(
      rt(), {20}, [](const Index<1>& i) { return float(i[0]); }, Partition::range(0, bounds));
  save_checkpoint(a, tmp.path() / "a");
  const auto b = load_checkpoint<float, 1>(rt(), tmp.path() / "a");
  EXPECT_EQ(b.distribution().bounds(), bounds);
  EXPECT_EQ(b.gather(), a.gather());
}

TEST(Checkpoint, SparseRoundTrip) {
  TempDir tmp("ckpt-sparse");
  std::vector<Entry<double, 2>> mine;
  for (std::int64_t k = 0; k < 30; ++k)
    if (k % rt().size() == rt().rank())
      mine.push_back({{(k * 7) % 25, k % 9}, 0.5 * static_cast<double>(k)});
  for (const auto& p : {Partition::range(0), Partition::hash(1), Partition::block2d(0, 1)}) {
    const auto s = DistArray<double, 2>::sparse(rt(), {25, 9}, mine, Duplicates::error, p);
    save_checkpoint(s, tmp.path() / "s");
    const auto t = load_checkpoint<double, 2>(rt(), tmp.path() / "s");
    EXPECT_TRUE(t.is_sparse());
    EXPECT_EQ(t.nnz(), 30);
    EXPECT_EQ(t.partition(), p);
    const auto want = s.gather_entries(), got = t.gather_entries();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].index, want[k].index);
      EXPECT_EQ(got[k].value, want[k].value);
    }
    for (const auto& key : t.local_keys()) EXPECT_TRUE(t.is_local(key));
  }
}

// Keys held with 4-byte subscripts in memory (every extent fits) are saved as 8-byte
// ones, the format's: an array of a shape past int32 and one within it, with the same
// entries, write parts of the same size and read back the same indices.
TEST(Checkpoint, SparseKeysAreSavedWideWhateverTheirWidthInMemory) {
  TempDir tmp("ckpt-key-width");
  constexpr std::int64_t kBig = std::int64_t{5} << 31;
  std::vector<Entry<float, 2>> mine;
  for (std::int64_t k = 0; k < 40; ++k)
    if (k % rt().size() == rt().rank()) mine.push_back({{k * 1000, k % 3}, static_cast<float>(k)});
  std::uintmax_t bytes[2] = {0, 0};
  int at = 0;
  for (const std::int64_t rows : {std::int64_t{50'000}, kBig}) {
    const auto s = DistArray<float, 2>::sparse(rt(), {rows, 3}, mine);
    const fs::path dir = tmp.path() / fmt::format("s{}", at);
    save_checkpoint(s, dir);
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().filename().string().find("part") != std::string::npos) bytes[at] += fs::file_size(f.path());
    const auto t = load_checkpoint<float, 2>(rt(), dir);
    const auto want = s.gather_entries(), got = t.gather_entries();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].index, want[k].index);
      EXPECT_EQ(got[k].value, want[k].value);
    }
    ++at;
  }
  EXPECT_GT(bytes[0], 0u);
  EXPECT_EQ(bytes[0], bytes[1]);
}

TEST(Checkpoint, OverwriteReplacesAtomicallyAndLeavesNothingBehind) {
  TempDir tmp("ckpt-overwrite");
  const auto a = DistArray<float, 1>::fill(rt(), {17}, 1.5f);
  const auto b = DistArray<float, 1>::fill(rt(), {9}, -2.0f, Partition::hash(0));
  save_checkpoint(a, tmp.path() / "c");
  save_checkpoint(b, tmp.path() / "c");
  const auto got = load_checkpoint<float, 1>(rt(), tmp.path() / "c");
  EXPECT_EQ(got.shape(), (Shape<1>{9}));
  EXPECT_EQ(got.gather(), b.gather());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"c"});
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path() / "c")) ++files;
  EXPECT_EQ(files, static_cast<std::size_t>(rt().size()) + 1);
  rt().comm().barrier();  // nobody removes the directory while another rank still lists it
}

TEST(Checkpoint, RelativePathAndMissingParents) {
  TempDir tmp("ckpt-paths");
  const auto a = DistArray<std::int64_t, 2>::generate(
      rt(), {6, 6}, [](const Index<2>& i) { return i[0] - i[1]; });
  const fs::path rel = fs::relative(tmp.path() / "x" / "y" / "ckpt", fs::current_path());
  ASSERT_TRUE(rel.is_relative());
  save_checkpoint(a, rel.string() + "/");
  EXPECT_TRUE(fs::exists(tmp.path() / "x" / "y" / "ckpt" / "manifest.txt"));
  EXPECT_EQ((load_checkpoint<std::int64_t, 2>(rt(), rel).gather()), a.gather());
}

TEST(Checkpoint, UnwritableLocationIsAnIoErrorNamingThePath) {
  TempDir tmp("ckpt-unwritable");
  on_rank0([&] { write_text(tmp.path() / "plain-file", "x"); });
  const auto a = DistArray<float, 1>::zeros(rt(), {4});
  const fs::path bad = tmp.path() / "plain-file" / "ckpt";
  try {
    save_checkpoint(a, bad);
    ADD_FAILURE() << "no IoError";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), (tmp.path() / "plain-file").string())) << e.what();
  }
  // A directory that is not a checkpoint is never replaced.
  on_rank0([&] {
    fs::create_directories(tmp.path() / "precious");
    write_text(tmp.path() / "precious" / "data.txt", "keep me");
  });
  EXPECT_THROW(save_checkpoint(a, tmp.path() / "precious"), IoError);
  EXPECT_EQ(read_text(tmp.path() / "precious" / "data.txt"), "keep me");
  if (::geteuid() != 0) {  // root ignores permissions
    on_rank0([&] {
      fs::create_directories(tmp.path() / "ro");
      fs::permissions(tmp.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    });
    try {
      save_checkpoint(a, tmp.path() / "ro" / "ckpt");
      ADD_FAILURE() << "no IoError";
    } catch (const IoError& e) {
      EXPECT_TRUE(contains(e.what(), (tmp.path() / "ro").string())) << e.what();
    }
    on_rank0([&] { fs::permissions(tmp.path() / "ro", fs::perms::owner_all); });
  }
  expect_ranks_in_step();
}

class CheckpointDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    save_checkpoint(a_, dir());
    last_part_ = dir() / fmt::format("part-{:05d}.bin", rt().size() - 1);
  }
  fs::path dir() const { return tmp_.path() / "ckpt"; }
  std::string load_error() {
    const std::string e = checkpoint_error([&] { load_checkpoint<float, 2>(rt(), dir()); });
    expect_ranks_in_step();
    return e;
  }

  TempDir tmp_{"ckpt-damage"};
  DistArray<float, 2> a_ =
      DistArray<float, 2>::randn(rt(), {16, 3}, 1.0, 0.0, Partition::range(0), 5);
  fs::path last_part_;
};

TEST_F(CheckpointDamage, FlippedByteIsAChecksumMismatch) {
  on_rank0([&] {
    std::fstream f(last_part_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(5);
    const char c = static_cast<char>(f.get());
    f.seekp(5);
    f.put(static_cast<char>(c ^ 0x10));
  });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "checksum mismatch") && contains(e, last_part_.string())) << e;
}

TEST_F(CheckpointDamage, TruncatedPartIsReported) {
  on_rank0([&] { fs::resize_file(last_part_, fs::file_size(last_part_) - 3); });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "truncated") && contains(e, "bytes") && contains(e, last_part_.string()))
      << e;
}

TEST_F(CheckpointDamage, GrownPartIsReported) {
  on_rank0([&] { std::ofstream(last_part_, std::ios::app | std::ios::binary) << "extra"; });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "wrong size") && contains(e, last_part_.string())) << e;
}

TEST_F(CheckpointDamage, MissingPartIsReported) {
  on_rank0([&] { fs::remove(last_part_); });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "missing") && contains(e, last_part_.string())) << e;
}

TEST_F(CheckpointDamage, GarbledManifestIsReportedWithItsLine) {
  const fs::path m = dir() / "manifest.txt";
  on_rank0([&] {
    std::string s = read_text(m);
    const auto at = s.find("shape=");
    s.replace(at, 6, "shape=x");
    write_text(m, s);
  });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "malformed at line 6") && contains(e, m.string())) << e;
}

TEST_F(CheckpointDamage, AlteredManifestFailsItsChecksum) {
  const fs::path m = dir() / "manifest.txt";
  on_rank0([&] {
    std::string s = read_text(m);
    const auto at = s.find("nnz=48");
    ASSERT_NE(at, std::string::npos);
    s.replace(at, 6, "nnz=47");
    write_text(m, s);
  });
  const auto e = load_error();
  EXPECT_TRUE(contains(e, "checksum mismatch") && contains(e, m.string())) << e;
}

TEST_F(CheckpointDamage, TruncatedOrMissingManifestIsReported) {
  const fs::path m = dir() / "manifest.txt";
  on_rank0([&] { fs::resize_file(m, fs::file_size(m) - 10); });
  auto e = load_error();
  EXPECT_TRUE(contains(e, "truncated") && contains(e, m.string())) << e;
  on_rank0([&] { fs::remove(m); });
  e = load_error();
  EXPECT_TRUE(contains(e, "missing") && contains(e, m.string())) << e;
}

TEST_F(CheckpointDamage, WrongElementTypeOrDimensionsIsRejected) {
  auto e = checkpoint_error([&] { load_checkpoint<double, 2>(rt(), dir()); });
  EXPECT_TRUE(contains(e, "elements of 4 bytes") && contains(e, "8 bytes")) << e;
  e = checkpoint_error([&] { load_checkpoint<std::int32_t, 2>(rt(), dir()); });
  EXPECT_TRUE(contains(e, "'f32'") && contains(e, "'i32'")) << e;
  e = checkpoint_error([&] { load_checkpoint<float, 3>(rt(), dir()); });
  EXPECT_TRUE(contains(e, "2-D") && contains(e, "3-D")) << e;
  e = checkpoint_error([&] { load_checkpoint<float, 2>(rt(), dir(), {}, "my-weights"); });
  EXPECT_TRUE(contains(e, "'my-weights'")) << e;
  expect_ranks_in_step();
  // The untouched checkpoint still loads.
  EXPECT_EQ((load_checkpoint<float, 2>(rt(), dir()).gather()), a_.gather());
}

TEST_F(CheckpointDamage, MissingDirectoryIsReported) {
  const auto e = checkpoint_error([&] { load_checkpoint<float, 2>(rt(), tmp_.path() / "nope"); });
  EXPECT_TRUE(contains(e, "does not exist") && contains(e, (tmp_.path() / "nope").string())) << e;
  expect_ranks_in_step();
}

}  // namespace
}  // namespace strata
