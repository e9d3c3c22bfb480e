// "src dst [weight]" lines (parse::edges) as double: line_parser_check.hpp says what
// is checked. (One element type per harness keeps the suite's fuzz build short;
// numbers.cpp checks every type's numbers.)
#include "line_parser_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const fuzz::LineParserSettings<2> s(in);
  fuzz::check_line_parser<double, 2>(parse::edges, in.rest(), s.base, s.shape, s.skip_bad);
  return 0;
}
