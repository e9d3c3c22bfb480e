// Plain text as every loader splits it (io::line_share, which parallel_scan uses): the
// records from a line boundary on are split among P ranks, each rank's share among T
// threads, and each thread scans its share (io::scan_chunk). For any text, P and T:
//   * the shares are adjacent, cover the records exactly and start at line boundaries;
//   * the lines the threads see, in rank and thread order, are the records' lines
//     (reference_lines), each once: no line is lost, split or read twice.
#include <vector>

#include "fuzz_check.hpp"
#include "strata/io/chunk_scan.hpp"
#include "strata/io/mapped_file.hpp"

namespace {

struct Collect {
  std::vector<std::string_view>* lines;
  void operator()(std::string_view line) { lines->push_back(line); }
};

bool at_line_start(std::string_view text, std::size_t p, std::size_t region_begin) {
  return p == region_begin || p == text.size() || text[p - 1] == '\n';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const std::size_t P = in.byte() % 16 + 1, T = in.byte() % 16 + 1;
  const std::uint8_t header_lines = in.byte() % 4;  // lines before the records, as docword's header
  const std::string_view text = in.rest();
  std::size_t region_begin = 0;
  for (int k = 0; k < header_lines && region_begin < text.size(); ++k) {
    const std::size_t nl = text.find('\n', region_begin);
    region_begin = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  std::vector<std::string_view> seen;
  std::size_t rank_next = region_begin;
  for (std::size_t r = 0; r < P; ++r) {
    const auto [rb, re] = io::line_share(text, region_begin, text.size(), r, P);
    FUZZ_CHECK(rb == rank_next && rb <= re && re <= text.size(), "ranks' shares are not adjacent");
    FUZZ_CHECK(at_line_start(text, rb, region_begin), "a rank's share starts inside a line");
    std::size_t thread_next = rb;
    for (std::size_t t = 0; t < T; ++t) {
      const auto [tb, te] = io::line_share(text, rb, re, t, T);
      FUZZ_CHECK(tb == thread_next && tb <= te && te <= re, "threads' shares are not adjacent");
      FUZZ_CHECK(at_line_start(text, tb, region_begin), "a thread's share starts inside a line");
      Collect c{&seen};
      io::scan_chunk(text.substr(tb, te - tb), c, true);
      thread_next = te;
    }
    FUZZ_CHECK(thread_next == re, "threads' shares do not cover the rank's");
    rank_next = re;
  }
  FUZZ_CHECK(rank_next == text.size(), "ranks' shares do not cover the records");
  const std::vector<std::string_view> want = fuzz::reference_lines(text.substr(region_begin));
  FUZZ_CHECK(seen.size() == want.size(), "lines lost or read twice");
  for (std::size_t k = 0; k < want.size(); ++k)
    FUZZ_CHECK(seen[k].data() == want[k].data() && seen[k].size() == want[k].size(), "a line split or moved");
  return 0;
}
