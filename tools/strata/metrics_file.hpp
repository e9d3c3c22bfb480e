// The metrics file a training run writes: one CSV row per pass.
//
//   # app=mf run=strata-np4 seed=42
//   pass,seconds,elapsed,items,items_per_s,loss,test_rmse
//   1,0.52,0.52,1000000,1923076.923076923,0.91,0.95
//   ...
//
// Lines starting with '#' hold metadata as whitespace-separated `key=value` pairs
// (anywhere in the file; a later key wins). The first other non-blank line is the
// header; every further line is a row with one number per column. `seconds` is the
// pass's training time and `elapsed` the cumulative training time; columns after
// `items_per_s` are the app's metrics. Only `pass` is required when reading.
//
// Written numbers use the shortest text that reads back to the same double, so a
// table survives a write/read round trip bit for bit (NaN payloads aside). A metadata
// value is written bare when it is one plain word, else in double quotes with \\,
// \", \n, \r and \t escaped (`# app=mf label="mf strata auto 2x2"`), so every value
// round-trips; a hand-written `# run=my label` reads as run="my label" (a word
// without '=' continues the previous value).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::cli {

/// The columns every run writes first, in this order.
inline const std::vector<std::string>& standard_metrics_columns() {
  static const std::vector<std::string> columns{"pass", "seconds", "elapsed", "items",
                                                "items_per_s"};
  return columns;
}

struct MetricsTable {
  std::map<std::string, std::string> meta;  ///< `# key=value` pairs
  std::vector<std::string> columns;         ///< the header, in file order
  std::vector<std::vector<double>> rows;    ///< each of columns.size() values
  std::string source;                       ///< the file read from (for messages); not written

  /// The position of column `name`, or nullopt.
  std::optional<std::size_t> find_column(const std::string& name) const;
  bool has_column(const std::string& name) const { return find_column(name).has_value(); }
  /// The values of column `name`, one per row. OptionError naming the column, the
  /// file and the columns there are, when there is no such column.
  std::vector<double> column(const std::string& name) const;
  /// The columns that are not standard ones (the app's metrics), in file order.
  std::vector<std::string> metric_columns() const;
};

/// Writes `table` to `path` atomically (to `path.tmp`, then renamed over `path`).
/// IoError naming the path when it cannot be written; OptionError for a missing
/// `pass` column, a column name the format cannot hold (empty, duplicated, a ',' or
/// control character, a leading '#', surrounding blanks) or a metadata key that is
/// not one word (empty, a blank, control character, '=' or '"');
/// ShapeError for a row whose width differs from the header's.
void write_metrics_csv(const std::string& path, const MetricsTable& table);

/// Reads a metrics file. IoError when it cannot be opened or read; ParseError
/// (file, 1-based line, text) for a missing header, a header without `pass`, an
/// empty or repeated column name, a row with the wrong number of fields or a field
/// that is not a number (nan and inf are numbers).
MetricsTable read_metrics_csv(const std::string& path);

/// Writes `content` to `path` atomically: to `path.tmp`, created afresh (a symlink
/// planted at either name is replaced, never written through), flushed to disk, then
/// renamed over `path`, so a reader sees the old file or the new one, never a part.
/// IoError naming the path (and the reason) on failure; the temporary is removed.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace strata::cli
