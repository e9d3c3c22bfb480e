// Files whose last line has no newline and ends in a token of 1 to 3 characters, for
// every text format, at sizes that are whole numbers of pages (the mapped file then
// ends exactly at a page boundary, where reading one byte too far faults) and not.
// The parsers' bounds themselves are checked against a guard page in parsers_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "strata/io/load.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;
using testing::TempDir;

// `head` + comment lines + `last` (no newline), `size` bytes in all (0: no padding).
std::string padded(const std::string& head, const std::string& last, std::size_t size) {
  std::string text = head;
  if (size > 0) {
    // Comment lines of up to 200 bytes; a last byte left over is a blank line.
    for (std::size_t left = size - head.size() - last.size(); left > 0;) {
      const std::size_t take = std::min<std::size_t>(left, 200);
      text += take == 1 ? std::string("\n") : "#" + std::string(take - 2, 'x') + "\n";
      left -= take;
    }
  }
  text += last;
  EXPECT_TRUE(size == 0 || text.size() == size);
  return text;
}

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  if (rt().rank() == 0) std::ofstream(path, std::ios::binary) << text;
  rt().comm().barrier();
  return path;
}

template <class T>
std::map<Index<2>, T> entries_of(const DistArray<T, 2>& a) {
  std::map<Index<2>, T> out;
  for (const auto& e : a.gather_entries()) out[e.index] = e.value;
  return out;
}

constexpr std::size_t kSizes[] = {0, 4096, 65536, std::size_t{1} << 20};

TEST(LoadLastLine, Triplets) {
  TempDir dir("last-line-triplets");
  for (const std::size_t size : kSizes)
    for (const char* last : {"2 1 5", "2 1 55", "2 1 5.5"}) {
      const auto path = write(dir, "r.txt", padded("0 0 1\n", last, size));
      const auto got = entries_of(load_sparse<float, 2>(rt(), path, parse::triplets));
      ASSERT_EQ(got.size(), 2u) << last << " " << size;
      EXPECT_EQ(got.at({2, 1}), std::stof(std::string(last).substr(4))) << last << " " << size;
    }
}

TEST(LoadLastLine, Edges) {
  TempDir dir("last-line-edges");
  for (const std::size_t size : kSizes)
    for (const char* last : {"1 2", "1 22", "1 222", "1 2 3"}) {
      const auto path = write(dir, "e.txt", padded("0 1\n", last, size));
      const auto got = entries_of(load_sparse<float, 2>(rt(), path, parse::edges));
      ASSERT_EQ(got.size(), 2u) << last << " " << size;
    }
}

TEST(LoadLastLine, Docword) {
  TempDir dir("last-line-docword");
  for (const std::size_t size : kSizes)
    for (const char* last : {"3 3 7", "3 3 77", "3 3 777"}) {
      const auto path = write(dir, "d.txt", padded("3\n3\n2\n1 1 1\n", last, size));
      const auto got = entries_of(load_docword<int>(rt(), path));
      ASSERT_EQ(got.size(), 2u) << last << " " << size;
      EXPECT_EQ(got.at({2, 2}), std::stoi(std::string(last).substr(4))) << last << " " << size;
    }
}

TEST(LoadLastLine, Libsvm) {
  TempDir dir("last-line-libsvm");
  for (const std::size_t size : kSizes)
    for (const char* last : {"-1 2:1", "-1 qid:3 2:1", "-1 2:11", "-1 qid:7", "-1"}) {
      const auto path = write(dir, "s.svm", padded("1 1:1\n", last, size));
      const auto data = load_libsvm(rt(), path);
      ASSERT_EQ(data.labels.extent(0), 2) << last << " " << size;
      EXPECT_EQ(data.labels.gather().at(1), -1.0f) << last << " " << size;
      const bool feature = std::string(last).find("2:") != std::string::npos;
      EXPECT_EQ(data.features.nnz(), feature ? 2 : 1) << last << " " << size;
    }
  // A malformed short last token is a ParseError naming the last line, not a read past it.
  for (const char* last : {"1 q", "1 qi", "1 qid"}) {
    const std::string text = padded("1 1:1\n", last, 4096);
    const auto path = write(dir, "bad.svm", text);
    try {
      load_libsvm(rt(), path);
      ADD_FAILURE() << last;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), std::count(text.begin(), text.end(), '\n') + 1) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad feature id"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace strata
