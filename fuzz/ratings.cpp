// Rating files as MovieLens ships them (parse::ratings, float): "user item rating
// [timestamp]" lines after an optional header of column names, which the loaders skip
// (io::data_start, io::is_header_line).
//   * the records start at 0 or just after the header, the first line that is not
//     blank or a comment, and lines_before counts the lines before them;
//   * a header line is never a record: the parser rejects every line is_header_line
//     takes for one (a record with a malformed value must be reported, not skipped);
//   * the records pass line_parser_check.hpp's checks.
#include "line_parser_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const fuzz::LineParserSettings<2> s(in);
  const std::string_view text = in.rest();
  const io::DataStart start = io::data_start(text, parse::ratings);
  FUZZ_CHECK(start.begin <= text.size(), "records start past the end");
  if (start.begin > 0) {
    const std::vector<std::string_view> before = fuzz::reference_lines(text.substr(0, start.begin));
    FUZZ_CHECK(text[start.begin - 1] == '\n' || start.begin == text.size(), "records start inside a line");
    FUZZ_CHECK(start.lines_before == static_cast<std::int64_t>(before.size()), "lines before the records");
    FUZZ_CHECK(io::is_header_line(before.back()), "skipped a line that is no header");
    for (std::size_t k = 0; k + 1 < before.size(); ++k)
      FUZZ_CHECK(io::Scanner(before[k]).blank_or_comment(), "skipped a record before the header");
  } else {
    FUZZ_CHECK(start.lines_before == 0, "lines before the records at 0");
  }
  for (std::string_view line : fuzz::reference_lines(text)) {
    if (!io::is_header_line(line)) continue;
    std::vector<Entry<float, 2>> out;
    const std::optional<Shape<2>> none;
    io::Emit<float, 2> emit({0, 0}, none, out);
    try {
      parse::ratings(line, emit);
    } catch (const io::LineError&) {
    }
    FUZZ_CHECK(out.empty(), "a header line that is also a record");
  }
  fuzz::check_line_parser<float, 2>(parse::ratings, text.substr(start.begin), s.base, s.shape, s.skip_bad);
  return 0;
}
