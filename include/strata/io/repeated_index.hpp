// Naming the lines of a repeated index. A parallel load learns that an index appears
// twice only when the elements meet at their owner, long after the lines were parsed;
// this serial rescan finds the first repeat in file order and both of its lines, so
// the error can name them. For error paths only: it keeps every index of the file in
// a hash map.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/io/header_line.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/io/parsers.hpp"
#include "strata/random.hpp"

namespace strata::io {

template <std::size_t N>
struct RepeatedIndex {
  Index<N> index{};             ///< as written in the file (no index base subtracted)
  std::int64_t first_line = 0;  ///< 1-based line where it first appears
  std::int64_t line = 0;        ///< 1-based line where it appears again
  std::string text;             ///< the text of `line`
};

/// The first index that `parser` emits a second time among the lines of `text` from
/// `start` on, or nullopt. Malformed lines are passed over (a load has reported or
/// skipped them already).
template <class T, std::size_t N, class Parser>
std::optional<RepeatedIndex<N>> find_repeated_index(std::string_view text, DataStart start, const Parser& parser) {
  struct Hash {
    std::size_t operator()(const Index<N>& i) const {
      std::uint64_t h = 0;
      for (const auto x : i) h = mix64(h ^ static_cast<std::uint64_t>(x));
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<Index<N>, std::int64_t, Hash> first_line;
  std::vector<Entry<T, N>> out;
  const std::optional<Shape<N>> no_shape;
  Emit<T, N> emit(Index<N>{}, no_shape, out);
  std::int64_t line_no = start.lines_before;
  for (std::size_t pos = start.begin; pos < text.size();) {
    const char* nl = static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
    const std::size_t end = nl ? static_cast<std::size_t>(nl - text.data()) : text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    out.clear();
    try {
      parser(line, emit);
    } catch (const LineError&) {
      continue;
    }
    for (const auto& e : out) {
      const auto [at, fresh] = first_line.try_emplace(e.index, line_no);
      if (!fresh) return RepeatedIndex<N>{e.index, at->second, line_no, std::string(line)};
    }
  }
  return std::nullopt;
}

/// find_repeated_index over the file at `path`, after its header line as the loaders
/// read it. On the calling rank alone; IoError when the file cannot be mapped.
template <class T, std::size_t N, class Parser>
std::optional<RepeatedIndex<N>> find_repeated_index(const std::string& path, const Parser& parser) {
  const MappedFile file(path);
  return find_repeated_index<T, N>(file.text(), data_start(file.text(), parser), parser);
}

}  // namespace strata::io
