// A rating file read line by line, in order, keeping each rating's line: what
// --test FILE and `strata predict mf` read, where a prediction goes out per line and
// an id the model lacks is an error naming its line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::apps::mf {

struct LineRating {
  std::int64_t line = 0;  ///< 1-based
  std::int64_t user = 0, item = 0;
  float value = 0;
  bool rated = false;  ///< "user item" lines (no rating) are read for prediction
};

/// Every "user item [rating [timestamp]]" line of `path` (parse::ratings's format; a
/// header of column names, blank and comment lines skipped), in file order. A rating
/// is required when `need_ratings`. ParseError names the file and line; IoError
/// naming `option` (the option that gave the path) when it cannot be read.
std::vector<LineRating> read_rating_lines(const std::string& path, bool need_ratings, const std::string& option);

/// The model's row of original id `id`: its position in `ids` (the training data's
/// distinct ids, increasing), or `id` itself when `ids` is empty (ids were not
/// renumbered) and below `rows`; -1 when the model has no such row.
std::int64_t model_row(const std::vector<std::int64_t>& ids, std::int64_t rows, std::int64_t id);

}  // namespace strata::apps::mf
