// Parallel text loading into DistArrays.
//
// Every rank reads its own byte range of the file (snapped to line boundaries),
// parses it with its threads, and the parsed elements are routed to the ranks that
// own them. The loaded array is the same for any number of ranks and threads.
//
//   auto R = strata::load_sparse<float, 2>(rt, "ratings.txt", strata::parse::triplets);
//   auto M = strata::load_sparse<float, 2>(rt, "ratings.csv", strata::parse::ratings);  // MovieLens
//   auto E = strata::load_sparse<float, 2>(rt, "graph.txt", strata::parse::edges);
//   auto D = strata::load_docword(rt, "docword.kos.txt");
//   auto S = strata::load_libsvm(rt, "train.svm");
//   auto U = strata::load_sparse<double, 3>(rt, "t.txt", [](std::string_view line, strata::io::Emit<double, 3>& emit) {
//     ... emit({i, j, k}, v); ... });   // a user parser; throw io::LineError{"why"} on bad lines
//
// A malformed line raises ParseError naming the file, the line number and the text
// (on every rank); with skip_bad_lines the line is skipped and counted instead. So
// does an index that appears twice (under Duplicates::error), naming both lines.
// parse_entries parses without building an array, keeping the file's order.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/detail/free_now.hpp"
#include "strata/detail/stopwatch.hpp"
#include "strata/dist_array.hpp"
#include "strata/io/header_line.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/io/parsers.hpp"
#include "strata/io/repeated_index.hpp"
#include "strata/io/scan.hpp"
#include "strata/io/text_records.hpp"

namespace strata {

struct LoadOptions {
  /// Skip and count malformed lines instead of raising ParseError.
  bool skip_bad_lines = false;
  /// Value subtracted from every index in the file; default per format:
  /// 0 for triplets, edges and user parsers, 1 for LIBSVM feature ids and docword.
  std::optional<std::int64_t> index_base;
  /// What to do when an index appears twice.
  Duplicates duplicates = Duplicates::error;
  /// Partition of the loaded array.
  Partition partition = Partition::range(0);
};

/// What a load did; figures are job-wide unless marked local.
struct LoadReport {
  std::string path;
  std::int64_t bytes = 0;        ///< bytes of records in the file
  std::int64_t local_bytes = 0;  ///< bytes this rank parsed
  std::int64_t lines = 0;        ///< lines scanned (including blank and comment lines)
  std::int64_t records = 0;      ///< elements loaded (after merging duplicates)
  std::int64_t bad_lines = 0;    ///< malformed lines skipped
  std::vector<io::BadLine> first_bad_lines;  ///< this rank's first few skipped lines
  double parse_seconds = 0;      ///< reading and parsing (slowest rank)
  double route_seconds = 0;      ///< routing to owners and sorting (slowest rank)
  double total_seconds = 0;
};

namespace io::detail {

/// Opens the file on every rank; raises one IoError on every rank if any cannot.
std::unique_ptr<MappedFile> open_everywhere(Runtime& rt, const std::string& path);

/// Completes a load's report (collective): routing and total times of the slowest
/// rank, the records loaded; then logs skipped lines (a count on rank 0, the first
/// few on every rank that saw them).
void finish_report(Runtime& rt, LoadReport& report, std::chrono::steady_clock::time_point start,
                   std::chrono::steady_clock::time_point route_start, std::int64_t records);

using strata::detail::seconds_since;

/// Copies what a scan found into a load report.
void record_scan(LoadReport& report, const std::string& path, const ScanSummary& scan);

/// Parses the file's lines from byte region_begin on with `parser`, on every rank
/// and thread; returns this rank's elements in file order.
template <class T, std::size_t N, class Parser>
std::vector<Entry<T, N>> parse_region(Runtime& rt, const MappedFile& file, std::size_t region_begin,
                                      std::int64_t lines_before, const Parser& parser, const Index<N>& base,
                                      const std::optional<Shape<N>>& shape, bool skip_bad, LoadReport& report) {
  struct Handler {
    const Parser& parser;
    std::vector<Entry<T, N>> out;
    Emit<T, N> emit;
    Handler(const Parser& p, const Index<N>& b, const std::optional<Shape<N>>& s) : parser(p), emit(b, s, out) {}
    // Most formats hold one element per 8 or more bytes; reserving up front avoids
    // copying (and page-faulting) the output on every growth.
    void begin_chunk(std::size_t bytes) { out.reserve(bytes / 8 + 16); }
    void operator()(std::string_view line) {
      const std::size_t mark = out.size();
      try {
        parser(line, emit);
      } catch (const LineError&) {
        out.resize(mark);  // a bad line contributes nothing, not half a record
        throw;
      }
    }
  };
  std::vector<std::unique_ptr<Handler>> handlers;
  for (int t = 0; t < rt.threads(); ++t) handlers.push_back(std::make_unique<Handler>(parser, base, shape));
  const ScanSummary scan = parallel_scan(rt, file, region_begin, lines_before, skip_bad,
                                         [&](int t) -> Handler& { return *handlers[static_cast<std::size_t>(t)]; });
  record_scan(report, file.path(), scan);
  if (handlers.size() == 1) return std::move(handlers[0]->out);
  std::size_t total = 0;
  for (const auto& h : handlers) total += h->out.size();
  // Concatenated with each thread's output handed back as it is copied: the rank
  // holds its elements about once at the end of a parse, not twice (mf's 10M ratings
  // are 240 MB of entries, the largest memory of its whole run before this).
  std::vector<Entry<T, N>> all;
  all.reserve(total);
  for (auto& h : handlers) strata::detail::append_and_free(all, h->out);
  return all;
}

/// Opens the file on every rank and parses its records (after a header line, for a
/// parser whose format has one) on every rank and thread: this rank's elements in
/// file order. The header line counts in report.lines.
template <class T, std::size_t N, class Parser>
std::vector<Entry<T, N>> parse_file(Runtime& rt, const std::string& path, const Parser& parser,
                                    const LoadOptions& options, const std::optional<Shape<N>>& shape,
                                    LoadReport& report) {
  const auto file = open_everywhere(rt, path);
  const DataStart start = data_start(file->text(), parser);
  Index<N> base;
  base.fill(options.index_base.value_or(0));
  auto entries = parse_region<T, N>(rt, *file, start.begin, start.lines_before, parser, base, shape,
                                    options.skip_bad_lines, report);
  report.lines += start.lines_before;
  return entries;
}

/// DistArray::sparse over a file's elements. Under Duplicates::error a repeated index
/// is the file's fault: ParseError naming the line where it appears again and the
/// line where it appeared first (found by a serial rescan, on the error path only).
template <class T, std::size_t N, class Parser>
DistArray<T, N> array_of_file(Runtime& rt, const std::string& path, const Parser& parser, const Shape<N>& shape,
                              std::vector<Entry<T, N>> entries, const LoadOptions& options) {
  try {
    return DistArray<T, N>::sparse(rt, shape, std::move(entries), options.duplicates, options.partition);
  } catch (const ShapeError&) {
    // Every rank gets the ShapeError (sparse agrees on errors) and rescans alike.
    if (options.duplicates != Duplicates::error) throw;
    const auto repeat = find_repeated_index<T, N>(path, parser);
    if (!repeat) throw;
    throw ParseError(path, repeat->line, repeat->text,
                     fmt::format("index {} appears again (first on line {}); LoadOptions::duplicates (sum, first "
                                 "or last) merges repeated indices",
                                 to_string(repeat->index), repeat->first_line));
  }
}

/// The smallest shape holding every index of every rank.
template <class T, std::size_t N>
Shape<N> infer_shape(Runtime& rt, const std::vector<Entry<T, N>>& entries) {
  std::array<std::int64_t, N> hi;
  hi.fill(-1);
  for (const auto& e : entries)
    for (std::size_t d = 0; d < N; ++d) hi[d] = std::max(hi[d], e.index[d]);
  rt.comm().allreduce(std::span(hi), ReduceOp::max);
  Shape<N> s;
  for (std::size_t d = 0; d < N; ++d) s[d] = hi[d] + 1;
  return s;
}

}  // namespace io::detail

/// Loads a sparse N-D array from a text file with any line parser (built-in ones
/// are in strata::parse). The shape is inferred (largest index + 1 per dimension)
/// unless given. Collective.
template <class T, std::size_t N, class Parser>
DistArray<T, N> load_sparse(Runtime& rt, const std::string& path, const Parser& parser, const LoadOptions& options = {},
                            std::optional<Shape<N>> shape = {}, LoadReport* report = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  auto entries = io::detail::parse_file<T, N>(rt, path, parser, options, shape, rep);
  const auto route_start = std::chrono::steady_clock::now();
  const Shape<N> s = shape ? *shape : io::detail::infer_shape(rt, entries);
  auto array = io::detail::array_of_file<T, N>(rt, path, parser, s, std::move(entries), options);
  io::detail::finish_report(rt, rep, start, route_start, array.nnz());
  return array;
}

/// Parses a text file as load_sparse does (every rank and thread; the same rules,
/// errors, header line and options, but for `duplicates` and `partition`) without
/// building an array: returns this rank's elements in file order. Rank r holds the
/// r-th of P consecutive parts of the file, so the ranks' results concatenated in rank
/// order are the whole file in order. For programs that need the file's order (a
/// reproducible shuffle) or transform the elements before building arrays; repeated
/// indices are theirs to judge (io::find_repeated_index names the lines). Collective.
template <class T, std::size_t N, class Parser>
std::vector<Entry<T, N>> parse_entries(Runtime& rt, const std::string& path, const Parser& parser,
                                       const LoadOptions& options = {}, std::optional<Shape<N>> shape = {},
                                       LoadReport* report = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  auto entries = io::detail::parse_file<T, N>(rt, path, parser, options, shape, rep);
  const auto records = rt.comm().allreduce(static_cast<std::int64_t>(entries.size()), ReduceOp::sum);
  io::detail::finish_report(rt, rep, start, std::chrono::steady_clock::now(), records);
  return entries;
}

/// Loads a UCI bag-of-words "docword" file: three header lines (documents, words,
/// non-zeros) then "doc word count" lines with 1-based ids. Returns the
/// documents x words count matrix; the record count must match the header.
template <class T = std::int32_t>
DistArray<T, 2> load_docword(Runtime& rt, const std::string& path, const LoadOptions& options = {},
                             LoadReport* report = nullptr);

/// A LIBSVM / SVMLight data set: sample x feature values and one label per sample.
struct LibsvmData {
  DistArray<float, 2> features;
  DistArray<float, 1> labels;
};

/// Loads "label [qid:q] index:value ..." lines (1-based feature ids by default;
/// ids must increase within a line; '#' starts a comment). Samples are numbered
/// by their order in the file. The feature count is inferred unless given; a given
/// count is also a bound: a larger feature id is a malformed line.
LibsvmData load_libsvm(Runtime& rt, const std::string& path, const LoadOptions& options = {},
                       std::optional<std::int64_t> num_features = {}, LoadReport* report = nullptr,
                       LibsvmLabels accepted = LibsvmLabels::any);

/// A LIBSVM data set as compressed sparse rows, in file order: sample i holds
/// features[offsets[i] .. offsets[i+1]) with their values, and labels[i]. Eight
/// bytes a non-zero, where a sparse DistArray's entries take 24.
struct LibsvmRows {
  std::vector<std::int64_t> offsets{0};  ///< samples + 1
  std::vector<std::int32_t> features;    ///< 0-based feature ids (after options.index_base)
  std::vector<float> values;
  std::vector<float> labels;
  std::int64_t feature_count = 0;        ///< the largest feature id + 1
  std::int64_t samples() const { return static_cast<std::int64_t>(labels.size()); }
};

/// Reads the same lines as load_libsvm, every rank its share and every thread a part
/// of it, into CSR arrays that every rank then holds whole (for a model that visits
/// samples by their position, as a serial program would). Feature ids must be below
/// 2^31 - 1 after the base; a larger one is a malformed line. options.partition and
/// options.duplicates do not apply (ids increase within a line). Collective.
LibsvmRows load_libsvm_rows(Runtime& rt, const std::string& path, const LoadOptions& options = {},
                            LoadReport* report = nullptr, LibsvmLabels accepted = LibsvmLabels::any);

}  // namespace strata

#include "strata/io/load_docword.hpp"
