// load_libsvm_rows: a LIBSVM file as CSR arrays held whole on every rank. Each thread
// keeps its lines compact (8 bytes a non-zero) as it parses them; the threads' and
// then the ranks' parts are joined in file order.
#include <functional>

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

// One part of the rows (a thread's or a rank's), as views.
struct RowsPart {
  std::span<const std::int64_t> offsets;  // starting at 0
  std::span<const std::int32_t> features;
  std::span<const float> values, labels;
};

RowsPart part_of(const LibsvmRows& r) { return {r.offsets, r.features, r.values, r.labels}; }

// Appends the parts to `all` in order, each sample's offsets shifted past the ones
// before, into arrays sized once; copied(k) is told when part k is no longer needed.
void join(LibsvmRows& all, const std::vector<RowsPart>& parts,
          const std::function<void(std::size_t)>& copied = [](std::size_t) {}) {
  std::size_t nonzeros = all.features.size(), samples = all.labels.size();
  for (const RowsPart& p : parts) nonzeros += p.features.size(), samples += p.labels.size();
  all.features.reserve(nonzeros);
  all.values.reserve(nonzeros);
  all.labels.reserve(samples);
  all.offsets.reserve(samples + 1);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const RowsPart& p = parts[k];
    const std::int64_t shift = all.offsets.back();
    for (std::size_t i = 1; i < p.offsets.size(); ++i) all.offsets.push_back(p.offsets[i] + shift);
    all.features.insert(all.features.end(), p.features.begin(), p.features.end());
    all.values.insert(all.values.end(), p.values.begin(), p.values.end());
    all.labels.insert(all.labels.end(), p.labels.begin(), p.labels.end());
    copied(k);
  }
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
  LibsvmRows all;
  all.feature_count = rt.comm().allreduce(mine.feature_count, ReduceOp::max);
  mine = {};
  std::vector<RowsPart> parts;
  for (std::size_t r = 0; r < offsets.size(); ++r)
    parts.push_back({as_span_of<std::int64_t>(offsets[r]), as_span_of<std::int32_t>(features[r]),
                     as_span_of<float>(values[r]), as_span_of<float>(labels[r])});
  join(all, parts);
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
  } else {
    std::vector<RowsPart> parts;
    for (const auto& h : handlers) {
      parts.push_back(part_of(h.rows));
      mine.feature_count = std::max(mine.feature_count, h.rows.feature_count);
    }
    join(mine, parts, [&](std::size_t t) { handlers[t].rows = {}; });  // a thread's part freed once copied
  }
  LibsvmRows all = gather_rows(rt, std::move(mine));
  io::detail::finish_report(rt, rep, start, join_start, static_cast<std::int64_t>(all.features.size()));
  return all;
}

}  // namespace strata
