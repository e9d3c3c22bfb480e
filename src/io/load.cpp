// Non-template parts of the loaders: opening files collectively, loading LIBSVM files
// and the end of every load report (the docword header and LIBSVM lines themselves are
// parsed in text_records.cpp).
#include "strata/io/load.hpp"

namespace strata {
namespace io::detail {

std::unique_ptr<MappedFile> open_everywhere(Runtime& rt, const std::string& path) {
  std::unique_ptr<MappedFile> file;
  strata::detail::all_or_none(rt.comm(), [&] { file = std::make_unique<MappedFile>(path); });
  return file;
}

void record_scan(LoadReport& report, const std::string& path, const ScanSummary& scan) {
  report.path = path;
  report.bytes = scan.bytes;
  report.local_bytes = scan.local_bytes;
  report.lines = scan.lines;
  report.bad_lines = scan.bad;
  report.first_bad_lines = scan.bad_lines;
  report.parse_seconds = scan.seconds;
}

void finish_report(Runtime& rt, LoadReport& report, std::chrono::steady_clock::time_point start,
                   std::chrono::steady_clock::time_point route_start, std::int64_t records) {
  report.route_seconds = rt.comm().allreduce(seconds_since(route_start), ReduceOp::max);
  report.records = records;
  report.total_seconds = rt.comm().allreduce(seconds_since(start), ReduceOp::max);
  if (report.bad_lines == 0) return;
  if (rt.rank() == 0)
    rt.logger().log(LogLevel::warn, "{}: skipped {} malformed line(s) of {}", report.path, report.bad_lines,
                    report.lines);
  for (const auto& b : report.first_bad_lines)
    rt.logger().log(LogLevel::warn, "{}:{}: {}: '{}'", report.path, b.line, b.reason, b.text.substr(0, 200));
}

}  // namespace io::detail

namespace {

// One thread's share of a LIBSVM file: features keyed by the thread-local sample
// number, shifted to global sample numbers once all counts are known.
struct LibsvmHandler {
  std::int64_t base;
  std::optional<std::int64_t> num_features;
  LibsvmLabels accepted;
  std::vector<Entry<float, 2>> features;
  std::vector<float> labels;

  void operator()(std::string_view line) {
    const auto sample = static_cast<std::int64_t>(labels.size());
    if (const auto label = io::detail::parse_libsvm_line(line, base, num_features, sample, features, accepted))
      labels.push_back(*label);
  }
};

}  // namespace

LibsvmData load_libsvm(Runtime& rt, const std::string& path, const LoadOptions& options,
                       std::optional<std::int64_t> num_features, LoadReport* report, LibsvmLabels accepted) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  const auto file = io::detail::open_everywhere(rt, path);
  std::vector<LibsvmHandler> handlers(static_cast<std::size_t>(rt.threads()),
                                      LibsvmHandler{options.index_base.value_or(1), num_features, accepted, {}, {}});
  const auto scan = io::parallel_scan(rt, *file, 0, 0, options.skip_bad_lines,
                                      [&](int t) -> LibsvmHandler& { return handlers[static_cast<std::size_t>(t)]; });
  io::detail::record_scan(rep, path, scan);

  const auto route_start = std::chrono::steady_clock::now();
  std::int64_t local_samples = 0;
  for (const auto& h : handlers) local_samples += static_cast<std::int64_t>(h.labels.size());
  std::int64_t samples = 0;
  std::int64_t offset = rt.comm().exclusive_scan(local_samples, &samples);
  std::vector<Entry<float, 2>> features;
  std::vector<Entry<float, 1>> labels;
  std::int64_t max_feature = -1;
  for (auto& h : handlers) {
    for (auto& e : h.features) {
      e.index[0] += offset;
      max_feature = std::max(max_feature, e.index[1]);
      features.push_back(e);
    }
    for (std::size_t k = 0; k < h.labels.size(); ++k)
      labels.push_back({{offset + static_cast<std::int64_t>(k)}, h.labels[k]});
    offset += static_cast<std::int64_t>(h.labels.size());
    h = LibsvmHandler{};
  }
  const std::int64_t nf = num_features ? *num_features : rt.comm().allreduce(max_feature, ReduceOp::max) + 1;
  LibsvmData out{DistArray<float, 2>::sparse(rt, {samples, nf}, std::move(features), options.duplicates,
                                             options.partition),
                 DistArray<float, 1>::dense_from_entries(rt, {samples}, labels, Partition::range(0))};
  io::detail::finish_report(rt, rep, start, route_start, out.features.nnz());
  return out;
}

}  // namespace strata
