// MappedFile on files that are not regular: a FIFO, a directory, a device. Each is
// refused at once with an IoError that names the path and says what it is; opening a
// FIFO must not wait for a writer (it waited forever when none came).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/io/scan.hpp"

namespace strata {
namespace {

// The message of the IoError that mapping `path` raises, or why there was none.
std::string refusal(const std::string& path) {
  try {
    io::MappedFile file(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "mapped";
}

TEST(MappedFile, RefusesAFifoWithoutWaitingForAWriter) {
  const auto path = (std::filesystem::temp_directory_path() / ("strata-fifo-" + std::to_string(::getpid()))).string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto result = std::async(std::launch::async, [&] { return refusal(path); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "opening a FIFO waits for a writer";
    const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // lets the open return
    result.wait();
    if (writer >= 0) ::close(writer);
  } else {
    const std::string why = result.get();
    EXPECT_NE(why.find(path), std::string::npos) << why;
    EXPECT_NE(why.find("FIFO"), std::string::npos) << why;
  }
  std::filesystem::remove(path);
}

TEST(MappedFile, RefusesDirectoriesAndDevicesSayingWhatTheyAre) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_NE(refusal(dir).find("it is a directory, not a regular file"), std::string::npos) << refusal(dir);
  EXPECT_NE(refusal("/dev/null").find("it is a character device"), std::string::npos) << refusal("/dev/null");
  EXPECT_NE(refusal("/nonexistent/x").find("cannot open '/nonexistent/x'"), std::string::npos);
}

// A scan in pieces (each piece's pages released once parsed) sees every line once, in
// order, whatever the piece size, and numbers bad lines as one scan of the range does.
TEST(MappedFile, ScanInPiecesSeesEveryLineOnceAndReleasesPages) {
  const auto path = (std::filesystem::temp_directory_path() / ("strata-pieces-" + std::to_string(::getpid()))).string();
  std::string text;
  for (int k = 0; k < 5000; ++k) text += (k % 997 == 5 ? "bad " : "line ") + std::to_string(k) + "\n";
  std::ofstream(path, std::ios::binary) << text;
  const io::MappedFile file(path);
  struct Lines {
    std::vector<std::string> seen;
    void operator()(std::string_view line) {
      if (line.starts_with("bad")) throw io::LineError{"bad line"};
      seen.emplace_back(line);
    }
  };
  for (const std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{4096},
                                  std::size_t{1} << 25})
    for (const bool skip_bad : {true, false}) {
      Lines whole, pieces;
      const auto want = io::scan_chunk(file.text(), whole, skip_bad);
      const auto got = io::scan_releasing(file, 0, file.size(), pieces, skip_bad, piece);
      EXPECT_EQ(pieces.seen, whole.seen) << "piece " << piece;
      EXPECT_EQ(got.lines, want.lines) << "piece " << piece;
      EXPECT_EQ(got.bad, want.bad) << "piece " << piece;
      ASSERT_EQ(got.bad_lines.size(), want.bad_lines.size()) << "piece " << piece;
      for (std::size_t b = 0; b < want.bad_lines.size(); ++b) {
        EXPECT_EQ(got.bad_lines[b].line, want.bad_lines[b].line) << "piece " << piece;
        EXPECT_EQ(got.bad_lines[b].text, want.bad_lines[b].text) << "piece " << piece;
      }
    }
  // Released pages read the file again.
  file.release(0, file.size());
  EXPECT_EQ(file.text(), text);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace strata
