// MappedFile on files that are not regular: a FIFO, a directory, a device. Each is
// refused at once with an IoError that names the path and says what it is; opening a
// FIFO must not wait for a writer (it waited forever when none came).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"

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

}  // namespace
}  // namespace strata
