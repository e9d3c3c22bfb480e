// Naming the lines of a repeated index when a load refuses one (Duplicates::error):
// the routing that finds the repeat knows the index but not the lines it came from,
// so the loader scans the file once more, serially, on this error path only.
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "strata/dist_array.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/io/parsers.hpp"

namespace strata::io::detail {

/// "FILE:LINE: index (i, j) appears again (first on line L)" for the repeated index
/// whose second occurrence comes first in the file; empty when there is none. Lines
/// the parser refuses are passed over (they were skipped or reported already).
template <class T, std::size_t N, class Parser>
std::string repeated_index_lines(const MappedFile& file, std::size_t region_begin, std::int64_t lines_before,
                                 const Parser& parser, const Index<N>& base, const std::optional<Shape<N>>& shape) {
  struct Seen {
    Index<N> index;
    std::int64_t line;
  };
  std::vector<Seen> seen;
  std::vector<Entry<T, N>> out;
  Emit<T, N> emit(base, shape, out);
  const std::string_view text = file.text();
  std::int64_t line = lines_before;
  for (std::size_t at = region_begin; at < text.size();) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    ++line;
    out.clear();
    try {
      parser(text.substr(at, nl - at), emit);
    } catch (const LineError&) {
      out.clear();
    }
    for (const auto& e : out) seen.push_back({e.index, line});
    at = nl + 1;
  }
  std::stable_sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.index < b.index; });
  std::optional<std::tuple<std::int64_t, std::int64_t, Index<N>>> best;  // second line, first line, index
  for (std::size_t k = 1; k < seen.size(); ++k)
    if (seen[k].index == seen[k - 1].index && (!best || seen[k].line < std::get<0>(*best)))
      best.emplace(seen[k].line, seen[k - 1].line, seen[k].index);
  if (!best) return {};
  Index<N> shown = std::get<2>(*best);
  for (std::size_t d = 0; d < N; ++d) shown[d] += base[d];  // as the file writes it
  return fmt::format("{}:{}: index {} appears again (first on line {})", printable(file.path()), std::get<0>(*best),
                     to_string(shown), std::get<1>(*best));
}

/// DistArray::sparse over a load's entries; a refused repeated index is reported
/// with the file, both lines and the option that would merge it. Collective.
template <class T, std::size_t N, class Parser>
DistArray<T, N> sparse_from_file(Runtime& rt, const MappedFile& file, std::size_t region_begin,
                                 std::int64_t lines_before, const Parser& parser, const Index<N>& base,
                                 const std::optional<Shape<N>>& given, const Shape<N>& shape,
                                 std::vector<Entry<T, N>> entries, const Duplicates duplicates,
                                 const Partition& partition) {
  try {
    return DistArray<T, N>::sparse(rt, shape, std::move(entries), duplicates, partition);
  } catch (const ShapeError& e) {
    if (duplicates != Duplicates::error || !std::strstr(e.what(), "appears more than once")) throw;
    const std::string where = repeated_index_lines<T, N>(file, region_begin, lines_before, parser, base, given);
    if (where.empty()) throw;
    throw ShapeError(where + "; LoadOptions::duplicates (sum, first or last) merges repeated indices instead");
  }
}

}  // namespace strata::io::detail
