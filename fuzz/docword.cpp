// A UCI bag-of-words (docword) file: its three header lines (io::detail::
// read_docword_header) and its "doc word count" records (parse::docword_records),
// as load_docword reads them: 1-based ids checked against the header's documents x
// words, int32 counts (load_docword's default).
//   * a bad header is a ParseError naming the file and a header line (1 to 3);
//   * a good one has non-negative figures and its records start at a line boundary;
//   * the records pass line_parser_check.hpp's checks, and their counts are positive;
//   * whether the text is taken for docword (io::looks_like_docword) depends on its
//     first four lines only.
#include <string>

#include "line_parser_check.hpp"
#include "strata/error.hpp"
#include "strata/io/text_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const std::uint8_t flags = in.byte();
  const std::string_view text = in.rest();
  // Whether a file is taken for docword depends on its first four lines only.
  std::size_t four = 0;
  for (int k = 0; k < 4 && four < text.size(); ++k) {
    const std::size_t nl = text.find('\n', four);
    four = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  FUZZ_CHECK(io::looks_like_docword(text) == io::looks_like_docword(text.substr(0, four)),
             "looks_like_docword read past the fourth line");
  io::detail::DocwordHeader h;
  try {
    h = io::detail::read_docword_header(text, "docword.txt");
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.file() == "docword.txt" && e.line() >= 1 && e.line() <= 3, "a header error names its line");
    return 0;
  }
  FUZZ_CHECK(h.docs >= 0 && h.words >= 0 && h.nnz >= 0, "negative header figures");
  FUZZ_CHECK(h.data_begin <= text.size(), "the records start past the end");
  FUZZ_CHECK(h.data_begin == text.size() || text[h.data_begin - 1] == '\n', "records start inside a line");
  const std::optional<Shape<2>> shape = Shape<2>{h.docs, h.words};
  const std::string_view records = text.substr(h.data_begin);
  const auto positive = [](std::int32_t count) { return count > 0; };
  fuzz::check_line_parser<std::int32_t, 2>(parse::docword_records, records, 1, shape, flags & 1, positive);
  return 0;
}
