// The MovieLens rating parser (parse::ratings), the header-line rule it relies on,
// and the docword sniffing of plain text: the format rules the `strata` command's
// apps and the library share, without files or ranks.
#include <gtest/gtest.h>

#include "strata/io/load.hpp"
#include "strata/io/parsers.hpp"

namespace strata {
namespace {

std::vector<Entry<float, 2>> rating_of(std::string_view line) {
  std::vector<Entry<float, 2>> out;
  const std::optional<Shape<2>> no_shape;  // Emit keeps a reference
  io::Emit<float, 2> emit(Index<2>{0, 0}, no_shape, out);
  parse::ratings(line, emit);
  return out;
}

std::string rating_error(std::string_view line) {
  try {
    rating_of(line);
  } catch (const io::LineError& e) {
    return e.reason;
  }
  return "accepted";
}

TEST(Ratings, ReadsMovieLensLinesWithOrWithoutATimestamp) {
  for (const char* line : {"10 500 4.5", "10,500,4.5", "10\t500\t4.5\t881250949", "10,500,4.5,1260759144",
                           "10, 500, 4.5, 1260759144", "10 500 4.5 # note", "10 500 45e-1\r", "10 500 4.5 -5"}) {
    const auto e = rating_of(line);
    ASSERT_EQ(e.size(), 1u) << line;
    EXPECT_EQ(e[0].index, (Index<2>{10, 500})) << line;
    EXPECT_EQ(e[0].value, 4.5f) << line;
  }
  EXPECT_EQ(rating_of("1 1 3e0").at(0).value, 3.0f);
  EXPECT_TRUE(rating_of("# comment").empty());
  EXPECT_TRUE(rating_of("  ").empty());
}

TEST(Ratings, RefusesWhatIsNotARating) {
  EXPECT_EQ(rating_error("9223372036854775808 1 3"), "bad user id '9223372036854775808'");
  EXPECT_EQ(rating_error("1 -2 3"), "bad item id '-2'");
  EXPECT_EQ(rating_error("1 1 nan"), "value is not a finite number");
  EXPECT_EQ(rating_error("1 1 1e300"), "bad rating '1e300'");
  EXPECT_EQ(rating_error("1 1 2.5e-"), "bad rating '2.5e-'");
  EXPECT_EQ(rating_error("1 1 2.5x 7"), "bad rating '2.5x'");
  EXPECT_EQ(rating_error("1 1"), "missing rating");
  EXPECT_EQ(rating_error("1,1,3,"), "missing timestamp");
  EXPECT_EQ(rating_error("1 1 3 4.5"), "bad timestamp '4.5'");
  EXPECT_EQ(rating_error("1 1 3 x"), "bad timestamp 'x'");
  EXPECT_EQ(rating_error("1 1 3 4 5"), "unexpected text after user, item, rating and timestamp");
}

TEST(HeaderLine, OnlyALineOfWordsIsAHeader) {
  for (const char* line : {"userId,movieId,rating,timestamp", "user item rating", "user\titem\r", "Info Item"})
    EXPECT_TRUE(io::is_header_line(line)) << line;
  for (const char* line : {"1 1 nan", "1 1 3e0", "nan,item,rating", "user item inf", "user 1 rating", "",
                           "  ", "\"userId\",\"movieId\"", "user item # rating", "user item 3"})
    EXPECT_FALSE(io::is_header_line(line)) << line;
}

TEST(HeaderLine, OnlyTheFirstLineThatIsNotBlankOrACommentCanBeOne) {
  const std::string_view text = "# MovieLens\n\nuser,item,rating\n1,2,3\n";
  const io::DataStart start = io::data_start(text, parse::ratings);
  EXPECT_EQ(start.begin, text.find("1,2,3"));
  EXPECT_EQ(start.lines_before, 3);
  EXPECT_EQ(io::data_start("1 2 3\nuser item rating\n", parse::ratings).begin, 0u);
  EXPECT_EQ(io::data_start("user item rating", parse::ratings).begin, 16u);
  // Formats without a header line never skip one.
  EXPECT_EQ(io::data_start("user item rating\n1 2 3\n", parse::triplets).begin, 0u);
}

TEST(DocwordSniff, TellsDocwordFromText) {
  EXPECT_TRUE(io::looks_like_docword("3\n4\n2\n1 1 1\n"));
  EXPECT_TRUE(io::looks_like_docword("3\r\n4\r\n2\r\n"));
  EXPECT_TRUE(io::looks_like_docword("3\nfour\n2\n1 1 1\n"));  // a bad header, reported by line
  EXPECT_FALSE(io::looks_like_docword("1611\nin the beginning\nwas the word\n"));
  EXPECT_FALSE(io::looks_like_docword("some words\n"));
  EXPECT_FALSE(io::looks_like_docword(""));
}

}  // namespace
}  // namespace strata
