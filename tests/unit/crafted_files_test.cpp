// Files a resume or a checkpoint load reads may be damaged or crafted (issue #29): a
// length or count read from one is checked against the bytes left before it sizes
// anything, sizes are multiplied without overflow, a manifest that re-signs absurd
// extents is refused before anything is enumerated or allocated, and reads refuse
// FIFOs (which would block) and, inside checkpoints, symbolic links.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "recovery/run_checkpoint.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/partition.hpp"

namespace strata {
namespace {
namespace fs = std::filesystem;

template <class F>
std::string crafted_error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Bytes journal_with(std::initializer_list<std::uint64_t> words) {
  Bytes b;
  for (auto w : words) detail::append<std::uint64_t>(b, w);
  return b;
}

TEST(CraftedJournal, LengthsBeyondTheFileAreRefusedBeforeAllocating) {
  // One record whose site string claims 2^60 bytes; one with 2^61 states; one state of 2^62 bytes.
  const Bytes huge_site = journal_with({1, std::uint64_t{1} << 60});
  const Bytes many_states = journal_with({1, 0, std::uint64_t{1} << 61});
  const Bytes huge_state = journal_with({1, 0, 1, std::uint64_t{1} << 62});
  const Bytes many_records = journal_with({std::uint64_t{1} << 59});
  for (const Bytes* b : {&huge_site, &many_states, &huge_state, &many_records}) {
    const std::string e = crafted_error_of([&] { recovery::decode_journal(*b, "j.bin"); });
    EXPECT_NE(e.find("j.bin: the journal ends in the middle of a record"), std::string::npos) << e;
  }
}

TEST(CraftedJournal, AWellFormedJournalStillRoundTrips) {
  std::vector<recovery::CallRecord> calls(2);
  calls[0].site = "a.cpp:12";
  calls[0].states = {Bytes(3, std::byte{7}), Bytes{}};
  calls[1].site = "b.cpp:40";
  const auto back = recovery::decode_journal(recovery::encode_journal(calls), "j.bin");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].site, "a.cpp:12");
  EXPECT_EQ(back[0].states, calls[0].states);
  EXPECT_EQ(back[1].states.size(), 0u);
}

TEST(CraftedReader, ALengthThatWrapsTheOffsetIsRefused) {
  const Bytes b(16);
  detail::Reader in(b);
  in.get<std::uint64_t>();
  EXPECT_THROW(in.take(SIZE_MAX - 4), InternalError);  // 8 + (2^64 - 5) wraps to 3
  EXPECT_THROW(in.get_span(std::span(static_cast<std::byte*>(nullptr), SIZE_MAX)), InternalError);
}

recovery::RunManifest crafted_run_manifest() {
  recovery::RunManifest m;
  m.program = "strata";
  m.ranks = 1;
  m.threads = 2;
  m.call = 3;
  m.site = "mf/strata.cpp:40";
  m.arrays.push_back({5, "f32", {30, 8}, true, 3, "W"});
  m.nested = {{"array-5", 0x1234}, {"state-5", 0xabcd}};
  m.settings = {{"--lr", "0.05"}, {"--data", "bytes 10 xxh3 00ff"}, {"--empty", ""}};
  m.journals = {{100, 0x99}};
  return m;
}

TEST(CraftedRunManifest, SettingsAndNestedChecksumsRoundTrip) {
  const auto m = crafted_run_manifest();
  const auto back = recovery::parse_run_manifest(recovery::format_run_manifest(m), "manifest.txt");
  ASSERT_EQ(back.settings.size(), 3u);
  EXPECT_EQ(back.settings[1].name, "--data");
  EXPECT_EQ(back.settings[1].value, "bytes 10 xxh3 00ff");
  EXPECT_EQ(back.settings[2].value, "");
  ASSERT_EQ(back.nested.size(), 2u);
  EXPECT_EQ(back.nested[1].dir, "state-5");
  EXPECT_EQ(back.nested[1].checksum, 0xabcdu);
}

TEST(CraftedRunManifest, EarlierVersionsAndForeignDirectoriesAreRefused) {
  auto m = crafted_run_manifest();
  m.version = 1;
  EXPECT_NE(crafted_error_of([&] { recovery::parse_run_manifest(recovery::format_run_manifest(m), "m.txt"); })
                .find("version 1; this build of Strata reads version 2 only"),
            std::string::npos);
  m = crafted_run_manifest();
  m.nested[0].dir = "../elsewhere";
  EXPECT_NE(crafted_error_of([&] { recovery::parse_run_manifest(recovery::format_run_manifest(m), "m.txt"); })
                .find("malformed nested line"),
            std::string::npos);
}

TEST(CraftedRunManifest, ControlCharactersInMessagesAreEscaped) {
  const std::string text = "strata-run-checkpoint 2\n\x1b[2Jboom 1\n";
  const std::string e = crafted_error_of([&] { recovery::parse_run_manifest(text, "m.txt"); });
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("\\x1b[2Jboom"), std::string::npos) << e;
}

detail::CheckpointManifest crafted_array_manifest(std::vector<std::int64_t> shape, bool sparse, std::int64_t nnz,
                                                  std::vector<std::uint64_t> part_bytes) {
  detail::CheckpointManifest m;
  m.element_size = 4;
  m.type_tag = "f32";
  m.dims = shape.size();
  m.shape = std::move(shape);
  m.sparse = sparse;
  m.partition = Partition::range(0);
  m.ranks = static_cast<int>(part_bytes.size());
  m.nnz = nnz;
  for (std::size_t k = 0; k < part_bytes.size(); ++k)
    m.parts.push_back({detail::checkpoint_part_name(static_cast<int>(k)), part_bytes[k], 0});
  return m;
}

std::string parse_error_of(const detail::CheckpointManifest& m) {
  return crafted_error_of([&] { detail::parse_manifest(detail::format_manifest(m), "array/manifest.txt"); });
}

TEST(CraftedArrayManifest, ExtentsWhoseProductOverflowsAreRefused) {
  // Re-signed (format_manifest computes the checksum): 2^32 x 2^32 elements.
  const auto e = parse_error_of(crafted_array_manifest({4294967296, 4294967296}, false, 0, {0}));
  EXPECT_NE(e.find("more elements than 2^63"), std::string::npos) << e;
  const auto bytes = parse_error_of(crafted_array_manifest({std::int64_t{1} << 62}, false, std::int64_t{1} << 62, {0}));
  EXPECT_NE(bytes.find("more than 2^63 bytes"), std::string::npos) << bytes;
}

TEST(CraftedArrayManifest, PartsMustAddUpToTheArrayBeforeAnyBoxIsComputed) {
  auto m = crafted_array_manifest({100000000000}, false, 100000000000, {16});
  m.partition = Partition::hash(0);  // its box would enumerate 1e11 rows
  const auto e = parse_error_of(m);
  EXPECT_NE(e.find("parts hold 16 bytes but 100000000000 elements of 4 bytes take 400000000000"), std::string::npos)
      << e;
  // Claimed to the byte, the parts are larger than any machine here.
  auto claimed = crafted_array_manifest({100000000000}, false, 100000000000, {400000000000});
  claimed.partition = Partition::hash(0);
  const auto big = parse_error_of(claimed);
  EXPECT_NE(big.find("more than this machine's memory"), std::string::npos) << big;
}

TEST(CraftedArrayManifest, AbsurdElementSizesAreRefused) {
  auto m = crafted_array_manifest({4}, false, 4, {16});
  m.element_size = std::uint64_t{1} << 63;
  EXPECT_NE(parse_error_of(m).find("element_size must be 1 to"), std::string::npos);
}

TEST(CraftedArrayManifest, EvenBoundsOfExtentsNear2To62DoNotOverflow) {
  const std::int64_t extent = (std::int64_t{1} << 62) + 5;
  const Distribution d(Partition::range(0), {extent}, 3);
  ASSERT_EQ(d.bounds().size(), 4u);
  EXPECT_EQ(d.bounds().front(), 0);
  EXPECT_EQ(d.bounds().back(), extent);
  for (std::size_t k = 1; k < d.bounds().size(); ++k) EXPECT_LE(d.bounds()[k - 1], d.bounds()[k]);
  EXPECT_EQ(d.bounds()[1], extent / 3);
}

TEST(CraftedArrayManifest, AHashPartitionTooLargeToListIsRefusedNotEnumerated) {
  const auto e = crafted_error_of([] { Distribution(Partition::hash(0), {std::int64_t{1} << 60}, 2).box(0); });
  EXPECT_NE(e.find("more than this machine's memory; use a range partition"), std::string::npos) << e;
  // A sparse manifest of that shape is read back without listing anything.
  auto m = crafted_array_manifest({std::int64_t{1} << 60}, true, 0, {0});
  m.partition = Partition::hash(0);
  EXPECT_EQ(parse_error_of(m), "(no error)");
}

class CraftedFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_crafted_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CraftedFiles, AFifoIsRefusedNotWaitedOn) {
  const fs::path fifo = dir_ / "latest";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto e = crafted_error_of([&] { detail::read_file(fifo, 64); });
  EXPECT_NE(e.find("latest: it is not a regular file"), std::string::npos) << e;
  EXPECT_NE(crafted_error_of([&] { detail::read_file(dir_, 64); }).find("it is a directory"), std::string::npos);
}

TEST_F(CraftedFiles, LinksAreRefusedWhereAskedAndTheReadIsSizedByTheFile) {
  std::ofstream(dir_ / "real") << "twelve bytes";
  fs::create_symlink(dir_ / "real", dir_ / "link");
  EXPECT_EQ(detail::read_file(dir_ / "link", 100).size(), 12u);
  const auto e = crafted_error_of([&] { detail::read_file(dir_ / "link", 100, detail::Links::refuse); });
  EXPECT_NE(e.find("it is a symbolic link"), std::string::npos) << e;
  // A limit from a crafted manifest does not allocate: the file has 12 bytes.
  EXPECT_EQ(detail::read_file(dir_ / "real", std::uint64_t{1} << 62).size(), 12u);
}

TEST_F(CraftedFiles, AFileTruncatedUnderItsMapReadsZerosAndIsReportedNotSigbus) {
  const fs::path f = dir_ / "ratings.txt";
  std::ofstream(f) << std::string(1 << 20, '7');
  const io::MappedFile map(f.string());
  fs::resize_file(f, 100);
  const volatile char* p = map.text().data();
  EXPECT_EQ(p[(1 << 19) + 3], '\0');  // past the new end: a zero page, not SIGBUS
  EXPECT_EQ(p[10], '7');
  const auto e = crafted_error_of([&] { map.check_unchanged(); });
  EXPECT_NE(e.find("ratings.txt' was truncated while being read"), std::string::npos) << e;
}

TEST_F(CraftedFiles, AFileThatGrowsWhileMappedIsReported) {
  const fs::path f = dir_ / "grows.txt";
  std::ofstream(f) << "1 2 3\n";
  const io::MappedFile map(f.string());
  map.check_unchanged();
  std::ofstream(f, std::ios::app) << "4 5 6\n";
  const auto e = crafted_error_of([&] { map.check_unchanged(); });
  EXPECT_NE(e.find("changed size while being read (from 6 to 12 bytes)"), std::string::npos) << e;
}

TEST(Printable, EscapesControlBytesAndInvalidUtf8AndKeepsText) {
  EXPECT_EQ(printable("plain text, 1.5"), "plain text, 1.5");
  EXPECT_EQ(printable("\x1b[31mred\x07"), "\\x1b[31mred\\x07");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");          // é stays
  EXPECT_EQ(printable("a\xc2\x9b" "b"), "a\\xc2\\x9bb");        // C1 control CSI
  EXPECT_EQ(printable("\xff\xc0\xaf"), "\\xff\\xc0\\xaf");     // invalid and overlong
  EXPECT_EQ(printable(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
}

}  // namespace
}  // namespace strata
