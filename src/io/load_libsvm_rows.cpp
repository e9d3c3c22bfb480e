// load_libsvm_rows: a LIBSVM file as CSR arrays held whole on every rank. Each thread
// keeps its lines compact (8 bytes a non-zero) as it parses them; the threads' and
// then the ranks' parts are joined in file order.
#include <cstring>

#include "strata/io/load.hpp"

namespace strata {

namespace {

struct RowsHandler {
  std::int64_t base;
  LibsvmLabels accepted;
  LibsvmRows rows;
  std::vector<Entry<float, 2>> line;  // one line's features, reused

  void begin_chunk(std::size_t bytes) {
    // A non-zero takes 4 or more bytes of text ("7:1 "); a line, 8 or more.
    rows.features.reserve(bytes / 6 + 16);
    rows.values.reserve(bytes / 6 + 16);
    rows.offsets.reserve(bytes / 64 + 16);
    rows.labels.reserve(bytes / 64 + 16);
  }
  void operator()(std::string_view text) {
    line.clear();
    const auto label = io::detail::parse_libsvm_line(text, base, std::int64_t{INT32_MAX}, 0, line, accepted);
    if (!label) return;
    for (const Entry<float, 2>& e : line) {
      rows.features.push_back(static_cast<std::int32_t>(e.index[1]));
      rows.values.push_back(e.value);
      rows.feature_count = std::max(rows.feature_count, e.index[1] + 1);
    }
    rows.labels.push_back(*label);
    rows.offsets.push_back(static_cast<std::int64_t>(rows.features.size()));
  }
};

template <class T>
void append(std::vector<T>& to, std::span<const T> from) {
  to.insert(to.end(), from.begin(), from.end());
}

// Appends `part` (offsets starting at 0) to `all`.
void append_rows(LibsvmRows& all, const LibsvmRows& part) {
  const std::int64_t shift = all.offsets.back();
  for (std::size_t i = 1; i < part.offsets.size(); ++i) all.offsets.push_back(part.offsets[i] + shift);
  append<std::int32_t>(all.features, part.features);
  append<float>(all.values, part.values);
  append<float>(all.labels, part.labels);
  all.feature_count = std::max(all.feature_count, part.feature_count);
}

template <class T>
std::span<const T> as_span_of(const Bytes& b) {
  return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
}

// Every rank's rows, in rank order (file order: rank r parsed the r-th byte range).
LibsvmRows gather_rows(Runtime& rt, LibsvmRows mine) {
  if (rt.size() == 1) return mine;
  auto gather = [&](auto& v) { return rt.comm().allgatherv(std::as_bytes(std::span(v))); };
  const std::vector<Bytes> offsets = gather(mine.offsets), features = gather(mine.features),
                           values = gather(mine.values), labels = gather(mine.labels);
  std::int64_t feature_count = rt.comm().allreduce(mine.feature_count, ReduceOp::max);
  mine = {};
  LibsvmRows all;
  for (std::size_t r = 0; r < offsets.size(); ++r) {
    const auto o = as_span_of<std::int64_t>(offsets[r]);
    const std::int64_t shift = all.offsets.back();
    for (std::size_t i = 1; i < o.size(); ++i) all.offsets.push_back(o[i] + shift);
    append(all.features, as_span_of<std::int32_t>(features[r]));
    append(all.values, as_span_of<float>(values[r]));
    append(all.labels, as_span_of<float>(labels[r]));
  }
  all.feature_count = feature_count;
  return all;
}

}  // namespace

LibsvmRows load_libsvm_rows(Runtime& rt, const std::string& path, const LoadOptions& options, LoadReport* report,
                            LibsvmLabels accepted) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  const auto file = io::detail::open_everywhere(rt, path);
  std::vector<RowsHandler> handlers(static_cast<std::size_t>(rt.threads()),
                                    RowsHandler{options.index_base.value_or(1), accepted, {}, {}});
  const auto scan = io::parallel_scan(rt, *file, 0, 0, options.skip_bad_lines,
                                      [&](int t) -> RowsHandler& { return handlers[static_cast<std::size_t>(t)]; });
  io::detail::record_scan(rep, path, scan);
  const auto join_start = std::chrono::steady_clock::now();
  LibsvmRows mine;
  if (handlers.size() == 1) {
    mine = std::move(handlers[0].rows);
  } else {  // sized once, each thread's part freed as soon as it is copied
    std::size_t nonzeros = 0, samples = 0;
    for (const auto& h : handlers) nonzeros += h.rows.features.size(), samples += h.rows.labels.size();
    mine.features.reserve(nonzeros);
    mine.values.reserve(nonzeros);
    mine.labels.reserve(samples);
    mine.offsets.reserve(samples + 1);
    for (auto& h : handlers) {
      append_rows(mine, h.rows);
      h.rows = {};
    }
  }
  LibsvmRows all = gather_rows(rt, std::move(mine));
  io::detail::finish_report(rt, rep, start, join_start, static_cast<std::int64_t>(all.features.size()));
  return all;
}

}  // namespace strata
