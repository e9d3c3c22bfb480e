// The record formats that need more than a line parser: the three header lines of a
// UCI bag-of-words (docword) file and one LIBSVM line. Plain functions on text, with
// no files, ranks or DistArrays, so that they can be tested and fuzzed alone; the
// loaders (load.hpp, load_docword.hpp) call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/index.hpp"

namespace strata::io::detail {

struct DocwordHeader {
  std::int64_t docs = 0, words = 0, nnz = 0;
  std::size_t data_begin = 0;  ///< byte offset of the first record
  std::string nnz_line;        ///< text of the third header line, for messages
};

/// Reads the three header lines of `text` (the whole file); raises ParseError naming
/// `path` and the bad line.
DocwordHeader read_docword_header(std::string_view text, const std::string& path);

/// One LIBSVM line, "label [qid:q] id:value ...": appends its features to `features`
/// as ({sample, id - base}, value) and returns the label; nullopt for a blank or
/// comment line. LineError for a malformed line, with `features` left as it was.
std::optional<float> parse_libsvm_line(std::string_view line, std::int64_t base,
                                       std::optional<std::int64_t> num_features, std::int64_t sample,
                                       std::vector<Entry<float, 2>>& features);

}  // namespace strata::io::detail
