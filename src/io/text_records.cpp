// The docword header and LIBSVM lines (text_records.hpp): text in, values or a
// typed error out; no files, ranks or arrays.
#include "strata/io/text_records.hpp"

#include <cmath>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/io/text_scan.hpp"

namespace strata::io::detail {

DocwordHeader read_docword_header(std::string_view text, const std::string& path) {
  static constexpr const char* kNames[] = {"number of documents", "number of words", "number of non-zeros"};
  DocwordHeader h;
  std::int64_t* fields[] = {&h.docs, &h.words, &h.nnz};
  std::size_t pos = 0;
  for (int k = 0; k < 3; ++k) {
    if (pos >= text.size())
      throw ParseError(path, k + 1, "", fmt::format("missing header line: {}", kNames[k]));
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    const std::string_view line = text.substr(pos, end - pos);
    try {
      Scanner s(line);
      *fields[k] = s.get_index(kNames[k]);
      s.finish(kNames[k]);
    } catch (const LineError& e) {
      throw ParseError(path, k + 1, std::string(line), e.reason);
    }
    if (k == 2) h.nnz_line = std::string(line);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  h.data_begin = pos;
  return h;
}

// The "qid:" of a ranking data set is compared only within the line (Scanner::consume):
// the last token of a file without a final newline ends at the end of the mapping.
std::optional<float> parse_libsvm_line(std::string_view line, std::int64_t base,
                                       std::optional<std::int64_t> num_features, std::int64_t sample,
                                       std::vector<Entry<float, 2>>& features, LibsvmLabels labels) {
  Scanner s(line);
  if (s.blank_or_comment()) return std::nullopt;
  const float label = s.get_number<float>("label");
  if (!std::isfinite(label)) throw LineError{"label is not a finite number"};
  if (labels == LibsvmLabels::binary && label != 1 && label != -1 && label != 0)
    throw LineError{fmt::format("label {} is not a class of binary classification (-1, 0 or 1)", label)};
  const std::size_t mark = features.size();
  std::int64_t previous = -1;
  try {
    while (s.skip_blanks(), !s.at_end() && *s.pos() != '#') {
      if (s.consume("qid:")) {  // ranking query id: not a feature
        s.get_index("query id");
        continue;
      }
      const std::int64_t raw = s.get_index("feature id");
      s.expect(':', "feature id:value pair");
      const float v = s.get_number<float>("feature value");
      if (!std::isfinite(v)) throw LineError{"feature value is not a finite number"};
      const std::int64_t f = raw - base;
      if (f < 0) throw LineError{fmt::format("feature id {} is below the index base {}", raw, base)};
      if (f <= previous) throw LineError{fmt::format("feature id {} does not increase", raw)};
      if (num_features && f >= *num_features)
        throw LineError{fmt::format("feature id {} exceeds the {} features given", raw, *num_features)};
      previous = f;
      features.push_back({{sample, f}, v});
      if (!s.at_end() && *s.pos() != ' ' && *s.pos() != '\t' && *s.pos() != '#')
        throw LineError{"expected a space after a feature value"};
    }
  } catch (const LineError&) {
    features.resize(mark);
    throw;
  }
  return label;
}

}  // namespace strata::io::detail
