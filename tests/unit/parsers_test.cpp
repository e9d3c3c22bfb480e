// Line parsers on good and bad lines, without files or ranks.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strata
