// LIBSVM lines, "label [qid:q] id:value ..." (io::detail::parse_libsvm_line), scanned
// as load_libsvm's threads scan their chunks, with a fuzzed index base (0 or 1) and an
// optional feature count (0..255).
//   * a line is rejected only with LineError, with a reason, and leaves the features
//     collected so far exactly as they were;
//   * a blank or comment line gives no label; any other accepted line a finite label;
//   * an accepted line's features carry its sample number, finite values and feature
//     ids that are at least 0, strictly increasing and below the feature count;
//   * the scan sees every line once (line_parser_check.hpp's scan checks hold too).
#include <cmath>
#include <optional>
#include <vector>

#include "fuzz_check.hpp"
#include "strata/io/chunk_scan.hpp"
#include "strata/io/text_records.hpp"

namespace {

using strata::Entry;

struct CheckedLibsvm {
  std::int64_t base = 1;
  std::optional<std::int64_t> num_features;
  std::vector<Entry<float, 2>> features;
  std::int64_t samples = 0;
  std::int64_t lines = 0;

  void operator()(std::string_view line) {
    ++lines;
    // The function only appends (and trims back on error): the size and the last
    // element before the line stand for the features collected so far.
    const std::size_t before = features.size();
    const std::optional<Entry<float, 2>> last = features.empty() ? std::nullopt : std::optional(features.back());
    std::optional<float> label;
    try {
      label = strata::io::detail::parse_libsvm_line(line, base, num_features, samples, features);
    } catch (const strata::io::LineError& e) {
      FUZZ_CHECK(!e.reason.empty(), "a LineError without a reason");
      FUZZ_CHECK(features.size() == before, "a bad line left features behind");
      FUZZ_CHECK(!last || (features.back().index == last->index && features.back().value == last->value),
                 "a bad line changed earlier features");
      throw;
    }
    FUZZ_CHECK(label.has_value() == !strata::io::Scanner(line).blank_or_comment(),
               "a label exactly for lines that are not blank or comments");
    if (!label) {
      FUZZ_CHECK(features.size() == before, "a blank line added features");
      return;
    }
    FUZZ_CHECK(std::isfinite(*label), "a label that is not finite");
    std::int64_t previous = -1;
    for (std::size_t k = before; k < features.size(); ++k) {
      const Entry<float, 2>& e = features[k];
      FUZZ_CHECK(e.index[0] == samples, "a feature with another sample's number");
      FUZZ_CHECK(e.index[1] > previous, "feature ids that do not increase (or are below 0)");
      if (num_features) FUZZ_CHECK(e.index[1] < *num_features, "a feature id beyond the feature count");
      FUZZ_CHECK(std::isfinite(e.value), "a feature value that is not finite");
      previous = e.index[1];
    }
    ++samples;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const std::uint8_t flags = in.byte();
  CheckedLibsvm handler;
  handler.base = flags & 1;
  if (flags & 2) handler.num_features = in.byte();
  const bool skip_bad = flags & 4;
  const std::string_view text = in.rest();
  const io::ChunkScan scan = io::scan_chunk(text, handler, skip_bad);
  const auto lines = static_cast<std::int64_t>(fuzz::reference_lines(text).size());
  FUZZ_CHECK(scan.lines == handler.lines, "line count != lines handed over");
  if (skip_bad || scan.bad == 0)
    FUZZ_CHECK(scan.lines == lines, "lines lost by the scan");
  else
    FUZZ_CHECK(scan.bad == 1 && scan.lines <= lines, "without skip_bad: stop at the first bad line");
  return 0;
}
