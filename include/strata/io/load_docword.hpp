// UCI bag-of-words (docword) loading; included by load.hpp.
#pragma once

#include "strata/io/load.hpp"

namespace strata {

namespace io::detail {

struct DocwordHeader {
  std::int64_t docs = 0, words = 0, nnz = 0;
  std::size_t data_begin = 0;  ///< byte offset of the first record
  std::string nnz_line;        ///< text of the third header line, for messages
};

/// Reads the three header lines; raises ParseError naming the bad line.
DocwordHeader read_docword_header(const MappedFile& file);

}  // namespace io::detail

template <class T>
DistArray<T, 2> load_docword(Runtime& rt, const std::string& path, const LoadOptions& options, LoadReport* report) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  const auto file = io::detail::open_everywhere(rt, path);
  io::detail::DocwordHeader h;
  detail::all_or_none(rt.comm(), [&] { h = io::detail::read_docword_header(*file); });
  const std::int64_t b = options.index_base.value_or(1);
  const Shape<2> shape{h.docs, h.words};
  auto entries = io::detail::parse_region<T, 2>(rt, *file, h.data_begin, 3, parse::docword_records, Index<2>{b, b},
                                                shape, options.skip_bad_lines, rep);
  const auto route_start = std::chrono::steady_clock::now();
  const auto found = rt.comm().allreduce(static_cast<std::int64_t>(entries.size()), ReduceOp::sum);
  if (!options.skip_bad_lines && found != h.nnz)
    throw ParseError(path, 3, h.nnz_line,
                     fmt::format("the header promises {} records but the file holds {}", h.nnz, found));
  auto array = io::detail::sparse_from_file<T, 2>(rt, *file, h.data_begin, 3, parse::docword_records,
                                                  Index<2>{b, b}, shape, shape, std::move(entries),
                                                  options.duplicates, options.partition);
  rep.lines += 3;
  io::detail::finish_report(rt, rep, start, route_start, array.nnz());
  return array;
}

}  // namespace strata
