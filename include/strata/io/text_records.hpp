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

namespace strata {

/// Which LIBSVM labels a load accepts; any other label is a malformed line.
enum class LibsvmLabels {
  any,     ///< any finite number (regression, multi-class)
  binary,  ///< -1, 0 or 1 ("+1" is 1): the two classes of a binary classification
};

}  // namespace strata

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
/// comment line. LineError for a malformed line (or a label `labels` refuses), with
/// `features` left as it was.
std::optional<float> parse_libsvm_line(std::string_view line, std::int64_t base,
                                       std::optional<std::int64_t> num_features, std::int64_t sample,
                                       std::vector<Entry<float, 2>>& features,
                                       LibsvmLabels labels = LibsvmLabels::any);

}  // namespace strata::io::detail

namespace strata::io {

/// Whether `text` (a file's beginning) is taken for a UCI docword file rather than
/// other text: its first line is one integer, and so are its second and third lines
/// (the header) or its fourth line is three integers (a first record). Fields may be
/// separated by spaces, tabs or commas. A text that merely starts with a number
/// ("1611\nIn the beginning ...") is not docword. Reads at most the first four lines
/// (src/io/docword_sniff.cpp).
bool looks_like_docword(std::string_view text);

}  // namespace strata::io
