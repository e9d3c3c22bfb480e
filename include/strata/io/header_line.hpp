// Header lines of text data files: the rule that tells a header of column names
// ("userId,movieId,rating,timestamp") from a record, and where a file's records begin
// when its first line is one. A line is a header only when nothing in it could be
// data: a record whose value is malformed ("1 1 nan") must be reported, not skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::io {

/// Whether `line` is a header of column names: it has at least one field (fields are
/// separated by spaces, tabs or commas), every field begins with a letter A-Z or a-z,
/// and no field reads as a number as a whole (std::from_chars, so "nan", "inf" and
/// "infinity" in any case are numbers). Thus "userId,movieId,rating" and "user item
/// rating" are headers; "1 1 nan", "1 1 3e0" and "nan,item,rating" are records.
bool is_header_line(std::string_view line);

/// Where a file's records begin.
struct DataStart {
  std::size_t begin = 0;          ///< byte offset of the first record line
  std::int64_t lines_before = 0;  ///< lines before `begin`, for line numbers
};

/// The records of `text` begin after its header line: the first line that is not
/// blank or a comment ('#' or '%' first), when is_header says it is one. Only that
/// line can be a header; otherwise the records begin at byte 0.
DataStart skip_header_line(std::string_view text, bool (*is_header)(std::string_view));

/// Where the records of `text` begin for `parser`: after a header line when the
/// parser's format has one (a static member is_header, see parsers.hpp), else at 0.
template <class Parser>
DataStart data_start(std::string_view text, const Parser&) {
  if constexpr (requires(std::string_view line) { Parser::is_header(line); })
    return skip_header_line(text, &Parser::is_header);
  else
    return {};
}

}  // namespace strata::io
