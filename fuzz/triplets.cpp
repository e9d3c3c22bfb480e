// "row col value" lines (parse::triplets), as float and as double: line_parser_check.hpp
// says what is checked.
#include "line_parser_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const bool as_double = in.byte() & 1;
  const fuzz::LineParserSettings<2> s(in);
  if (as_double)
    fuzz::check_line_parser<double, 2>(parse::triplets, in.rest(), s.base, s.shape, s.skip_bad);
  else
    fuzz::check_line_parser<float, 2>(parse::triplets, in.rest(), s.base, s.shape, s.skip_bad);
  return 0;
}
