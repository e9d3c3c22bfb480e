#include "mf/rating_file.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/io/header_line.hpp"
#include "strata/io/parsers.hpp"

namespace strata::apps::mf {

std::vector<LineRating> read_rating_lines(const std::string& path, bool need_ratings, const std::string& option) {
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("{}: cannot open rating file '{}'", option, path));
  std::vector<LineRating> out;
  std::vector<Entry<float, 2>> one;
  const Index<2> base{0, 0};
  const std::optional<Shape<2>> any_shape;  // Emit keeps references: both outlive it
  io::Emit<float, 2> emit(base, any_shape, one);
  std::string line;
  for (std::int64_t n = 1; std::getline(in, line); ++n) {
    if (n == 1 && io::is_header_line(line)) continue;
    try {
      io::Scanner s(line);
      if (s.blank_or_comment()) continue;
      LineRating r;
      r.line = n;
      r.user = s.get_index("user id");
      s.separator("item id");
      r.item = s.get_index("item id");
      s.skip_blanks();
      r.rated = !(s.at_end() || *s.pos() == '#');
      if (r.rated) {  // the library's parser checks the rest (a finite rating, a timestamp)
        one.clear();
        parse::ratings(line, emit);
        r.value = one.at(0).value;
      } else if (need_ratings) {
        throw io::LineError{"missing rating"};
      }
      out.push_back(r);
    } catch (const io::LineError& e) {
      throw ParseError(path, n, line, e.reason);
    }
  }
  if (in.bad()) throw IoError(fmt::format("{}: error reading '{}'", option, path));
  return out;
}

std::int64_t model_row(const std::vector<std::int64_t>& ids, std::int64_t rows, std::int64_t id) {
  if (ids.empty()) return id < rows ? id : -1;
  const auto at = std::lower_bound(ids.begin(), ids.end(), id);
  return at != ids.end() && *at == id ? at - ids.begin() : -1;
}

}  // namespace strata::apps::mf
