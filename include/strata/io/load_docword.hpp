// UCI bag-of-words (docword) loading; included by load.hpp.
#pragma once

#include "strata/io/load.hpp"

namespace strata {

template <class T>
DistArray<T, 2> load_docword(Runtime& rt, const std::string& path, const LoadOptions& options, LoadReport* report) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  const auto file = io::detail::open_everywhere(rt, path);
  io::detail::DocwordHeader h;
  detail::all_or_none(rt.comm(), [&] { h = io::detail::read_docword_header(file->text(), file->path()); });
  const std::int64_t b = options.index_base.value_or(1);
  const Shape<2> shape{h.docs, h.words};
  auto entries = io::detail::parse_region<T, 2>(rt, *file, h.data_begin, 3, parse::docword_records, Index<2>{b, b},
                                                shape, options.skip_bad_lines, rep);
  const auto route_start = std::chrono::steady_clock::now();
  const auto found = rt.comm().allreduce(static_cast<std::int64_t>(entries.size()), ReduceOp::sum);
  if (!options.skip_bad_lines && found != h.nnz)
    throw ParseError(path, 3, h.nnz_line,
                     fmt::format("the header promises {} records but the file holds {}", h.nnz, found));
  auto array = io::detail::array_of_file<T, 2>(rt, path, parse::docword_records, shape, std::move(entries), options);
  rep.lines += 3;
  io::detail::finish_report(rt, rep, start, route_start, array.nnz());
  return array;
}

}  // namespace strata
