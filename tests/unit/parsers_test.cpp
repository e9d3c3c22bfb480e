// Line parsers on good and bad lines, without files or ranks; and lines that end where
// the readable memory ends, as the last line of a mapped file without a final newline.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "strata/io/load.hpp"
#include "strata/io/parsers.hpp"

namespace strata {
namespace {

template <class T, std::size_t N, class P>
std::vector<Entry<T, N>> run(const P& parser, std::string_view line, std::int64_t base = 0,
                             std::optional<Shape<N>> shape = {}) {
  std::vector<Entry<T, N>> out;
  Index<N> b;
  b.fill(base);
  io::Emit<T, N> emit(b, shape, out);
  parser(line, emit);
  return out;
}

template <class T, std::size_t N, class P>
std::string reason(const P& parser, std::string_view line, std::int64_t base = 0, std::optional<Shape<N>> shape = {}) {
  try {
    run<T, N>(parser, line, base, shape);
  } catch (const io::LineError& e) {
    return e.reason;
  }
  return "accepted";
}

TEST(Triplets, AcceptsEverySeparatorStyle) {
  for (const char* line : {"3 7 4.5", "3\t7\t4.5", "3,7,4.5", "3, 7, 4.5", "  3 7 4.5  ", "3 7 4.5\r", "3 7 +4.5",
                           "3 7 4.5 # comment", "3 7 45e-1"}) {
    const auto e = run<float, 2>(parse::triplets, line);
    ASSERT_EQ(e.size(), 1u) << line;
    EXPECT_EQ(e[0].index, (Index<2>{3, 7})) << line;
    EXPECT_FLOAT_EQ(e[0].value, 4.5f) << line;
  }
}

TEST(Triplets, SkipsBlankAndCommentLines) {
  for (const char* line : {"", "   ", "# header", "% matrix market", "\r"})
    EXPECT_TRUE((run<float, 2>(parse::triplets, line).empty())) << line;
}

TEST(Triplets, RejectsMalformedLinesWithAReason) {
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 7")), "missing value");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3")), "missing column index");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 x 1.0")), "bad column index 'x'");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "-3 7 1.0")), "bad row index '-3'");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 7 abc")), "bad value 'abc'");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 7 1.0 9")), "unexpected text after row, column and value");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 7 nan")), "value is not a finite number");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3;7;1")), "expected a separator before column index");
  EXPECT_EQ((reason<float, 2>(parse::triplets, "99999999999999999999 1 1")), "bad row index '99999999999999999999'");
}

TEST(Triplets, IndexBaseAndShapeAreChecked) {
  const auto e = run<double, 2>(parse::triplets, "1 1 2.0", 1);
  EXPECT_EQ(e.at(0).index, (Index<2>{0, 0}));
  EXPECT_EQ((reason<double, 2>(parse::triplets, "0 1 2.0", 1)), "index 0 is below the index base 1");
  EXPECT_EQ((reason<double, 2>(parse::triplets, "4 1 2.0", 0, Shape<2>{4, 4})),
            "index 4 is outside the shape (4, 4) (indices counted from 0)");
}

TEST(Triplets, IntegerValues) {
  EXPECT_EQ((run<int, 2>(parse::triplets, "1 2 5")).at(0).value, 5);
  EXPECT_EQ((reason<int, 2>(parse::triplets, "1 2 5.5")), "unexpected text after row, column and value");
}

TEST(Edges, WeightIsOptional) {
  EXPECT_FLOAT_EQ((run<float, 2>(parse::edges, "1 2")).at(0).value, 1.0f);
  EXPECT_FLOAT_EQ((run<float, 2>(parse::edges, "1 2 0.25")).at(0).value, 0.25f);
  EXPECT_FLOAT_EQ((run<float, 2>(parse::edges, "1,2,0.25")).at(0).value, 0.25f);
  EXPECT_FLOAT_EQ((run<float, 2>(parse::edges, "1\t2 # a comment")).at(0).value, 1.0f);
  EXPECT_EQ((reason<float, 2>(parse::edges, "1")), "missing target vertex");
  EXPECT_EQ((reason<float, 2>(parse::edges, "1 b")), "bad target vertex 'b'");
  EXPECT_EQ((reason<float, 2>(parse::edges, "1 2 w")), "bad weight 'w'");
  EXPECT_EQ((reason<float, 2>(parse::edges, "1 2 3 4")), "unexpected text after source, target and weight");
}

TEST(Docword, RecordsNeedPositiveCounts) {
  EXPECT_EQ((run<int, 2>(parse::docword_records, "2 5 3", 1)).at(0).index, (Index<2>{1, 4}));
  EXPECT_EQ((reason<int, 2>(parse::docword_records, "2 5 0", 1)), "count must be positive");
  EXPECT_EQ((reason<int, 2>(parse::docword_records, "2 5", 1)), "missing count");
}

// A copy of `text` whose last byte is the last readable byte: the page after it is
// PROT_NONE, so a parser that reads one byte past the end faults, as it does past the
// end of a mapped file whose size is a whole number of pages.
class AtPageEnd {
 public:
  explicit AtPageEnd(std::string_view text) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    size_ = (text.size() / page + 2) * page;
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<char*>(p);
    char* guard = base_ + size_ - page;
    if (::mprotect(guard, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
    std::memcpy(guard - text.size(), text.data(), text.size());
    view_ = std::string_view(guard - text.size(), text.size());
  }
  ~AtPageEnd() { ::munmap(base_, size_); }
  AtPageEnd(const AtPageEnd&) = delete;
  AtPageEnd& operator=(const AtPageEnd&) = delete;
  std::string_view view() const { return view_; }

 private:
  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::string_view view_;
};

// The LIBSVM line parser: the label, or the reason the line is malformed.
std::string libsvm(std::string_view line, std::vector<Entry<float, 2>>& features) {
  try {
    const auto label = io::detail::parse_libsvm_line(line, 1, std::nullopt, 0, features);
    return label ? fmt::format("label {}", *label) : "blank";
  } catch (const io::LineError& e) {
    return e.reason;
  }
}

TEST(LastToken, ScannerConsumeComparesOnlyWithinTheLine) {
  for (const char* text : {"q", "qi", "qid", "qid:"}) {
    const AtPageEnd at(text);
    io::Scanner s(at.view());
    EXPECT_EQ(s.consume("qid:"), std::string_view(text) == "qid:") << text;
  }
}

TEST(LastToken, TextFormatsParseLinesEndingAtTheEndOfMemory) {
  for (const char* line : {"3 7 4", "3 7 45", "3 7 4.5", "3,7,4"}) {
    const AtPageEnd at(line);
    const auto e = run<float, 2>(parse::triplets, at.view());
    ASSERT_EQ(e.size(), 1u) << line;
    EXPECT_EQ(e[0].index, (Index<2>{3, 7})) << line;
  }
  for (const char* line : {"1 2", "1 22", "1 222", "1 2 5", "1 2 0.5"}) {
    const AtPageEnd at(line);
    EXPECT_EQ((run<float, 2>(parse::edges, at.view())).size(), 1u) << line;
  }
  for (const char* line : {"2 5 3", "2 5 33", "2 5 333"}) {
    const AtPageEnd at(line);
    EXPECT_EQ((run<int, 2>(parse::docword_records, at.view(), 1)).size(), 1u) << line;
  }
  const AtPageEnd bad("3 7 x");
  EXPECT_EQ((reason<float, 2>(parse::triplets, bad.view())), "bad value 'x'");
}

// The crash of issue 29: "qid:" was compared as 4 bytes at every token, reading past a
// last token of 1 to 3 characters.
TEST(LastToken, LibsvmLinesEndingInAShortToken) {
  struct Case {
    const char* line;
    std::string want;
    std::size_t features;
  };
  for (const Case& c : {Case{"1 2:1", "label 1", 1}, Case{"1", "label 1", 0}, Case{"-1 qid:3 2:1", "label -1", 1},
                        Case{"1 qid:7", "label 1", 0}, Case{"1 2:1 3:2", "label 1", 2},
                        Case{"1 q", "bad feature id 'q'", 0}, Case{"1 qi", "bad feature id 'qi'", 0},
                        Case{"1 qid", "bad feature id 'qid'", 0},
                        Case{"1 2", "expected ':' in feature id:value pair", 0}}) {
    const AtPageEnd at(c.line);
    std::vector<Entry<float, 2>> features;
    EXPECT_EQ(libsvm(at.view(), features), c.want) << c.line;
    EXPECT_EQ(features.size(), c.features) << c.line;
  }
}

// Found by fuzzing (fuzz/numbers.cpp; input fuzz/corpus/numbers/plus_minus): "+-5" was
// read as -5, the '+' skipped for from_chars, which then took "-5". One sign only.
TEST(Numbers, OneSignOnly) {
  EXPECT_EQ((reason<float, 2>(parse::triplets, "3 7 +-5")), "bad value '+-5'");
  EXPECT_EQ((reason<double, 2>(parse::triplets, "3 7 +-0.5")), "bad value '+-0.5'");
  EXPECT_EQ((reason<int, 2>(parse::triplets, "3 7 +-5")), "bad value '+-5'");
  EXPECT_EQ((reason<int, 2>(parse::docword_records, "1 1 +-2", 1)), "bad count '+-2'");
  EXPECT_EQ((reason<float, 2>(parse::edges, "1 2 +-1")), "bad weight '+-1'");
  std::vector<Entry<float, 2>> features;
  EXPECT_EQ(libsvm("+-1 1:2", features), "bad label '+-1'");
  EXPECT_EQ(libsvm("1 1:+-2", features), "bad feature value '+-2'");
  EXPECT_TRUE(features.empty());
  EXPECT_EQ((run<float, 2>(parse::triplets, "3 7 +5")).at(0).value, 5.0f);  // one '+' is still fine
  EXPECT_EQ((run<float, 2>(parse::triplets, "3 7 -5")).at(0).value, -5.0f);
}

}  // namespace
}  // namespace strata
