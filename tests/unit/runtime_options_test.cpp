#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/runtime.hpp"

namespace strata {
namespace {

struct Args {
  explicit Args(std::vector<std::string> a) : store(std::move(a)) {
    for (auto& s : store) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(store.size());
  }
  std::vector<std::string> store;
  std::vector<char*> ptrs;
  int argc;
};

TEST(RuntimeOptions, ParsesAndRemovesStrataFlags) {
  Args a({"prog", "--strata-threads=3", "input.txt", "--strata-timeout", "2.5", "--strata-seed=9", "--x"});
  const auto o = parse_runtime_options(a.argc, a.ptrs.data());
  EXPECT_EQ(o.threads, 3);
  EXPECT_DOUBLE_EQ(o.timeout_seconds, 2.5);
  EXPECT_EQ(o.seed, 9u);
  ASSERT_EQ(a.argc, 3);
  EXPECT_STREQ(a.ptrs[1], "input.txt");
  EXPECT_STREQ(a.ptrs[2], "--x");
  EXPECT_EQ(a.ptrs[3], nullptr);
}

TEST(RuntimeOptions, CheckpointWriteMode) {
  EXPECT_TRUE(RuntimeOptions{}.checkpoint_in_background);
  Args inline_args({"prog", "--strata-checkpoint-write=inline"});
  EXPECT_FALSE(parse_runtime_options(inline_args.argc, inline_args.ptrs.data()).checkpoint_in_background);
  Args background({"prog", "--strata-checkpoint-write", "background"});
  RuntimeOptions defaults;
  defaults.checkpoint_in_background = false;
  EXPECT_TRUE(parse_runtime_options(background.argc, background.ptrs.data(), defaults).checkpoint_in_background);
}

TEST(RuntimeOptions, BadValuesNameTheOption) {
  for (const char* bad : {"--strata-threads=0", "--strata-threads=two", "--strata-timeout=-1", "--strata-log=loud",
                          "--strata-bogus=1", "--strata-seed=-4", "--strata-checkpoint-write=later",
                          "--strata-threads=1025", "--strata-threads=4294967297", "--strata-threads=2147483648",
                          "--strata-checkpoint-every=4294967297"}) {
    Args a({"prog", bad});
    try {
      parse_runtime_options(a.argc, a.ptrs.data());
      ADD_FAILURE() << "accepted " << bad;
    } catch (const OptionError& e) {
      const std::string flag = std::string(bad).substr(0, std::string(bad).find('='));
      if (std::string(bad).find("log") == std::string::npos) {
        EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
      }
    }
  }
}

// Integers are range-checked before they are narrowed to int; threads per rank are
// bounded (kMaxThreadsPerRank), and the message says the range.
TEST(RuntimeOptions, ThreadsAreBounded) {
  Args most({"prog", "--strata-threads=1024"});
  EXPECT_EQ(parse_runtime_options(most.argc, most.ptrs.data()).threads, kMaxThreadsPerRank);
  Args too_many({"prog", "--strata-threads=100000"});
  try {
    parse_runtime_options(too_many.argc, too_many.ptrs.data());
    ADD_FAILURE() << "accepted 100000 threads";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("--strata-threads: expected an integer in [1, 1024]"), std::string::npos)
        << e.what();
  }
}

TEST(RuntimeOptions, MissingValueIsAnError) {
  Args a({"prog", "--strata-threads"});
  EXPECT_THROW(parse_runtime_options(a.argc, a.ptrs.data()), OptionError);
}

}  // namespace
}  // namespace strata
