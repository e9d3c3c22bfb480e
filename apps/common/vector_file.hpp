// Rows of named vectors in word2vec's text format, which gensim, fastText's tools and
// most embedding code read: a line "rows dim", then a line per row, its name and its
// values. word2vec writes its word vectors so, transe its entity and relation rows.
#pragma once

#include <string>
#include <vector>

namespace strata::apps {

/// Writes names.size() rows of `dim` values (row-major in `values`), each with its
/// name. Values are written in the shortest form that reads back to the same float.
/// IoError naming the file when it cannot be written.
void write_vectors(const std::string& path, const std::vector<std::string>& names, const std::vector<float>& values,
                   int dim);

}  // namespace strata::apps
