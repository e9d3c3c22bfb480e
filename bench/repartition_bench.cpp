// Repartitioning cost: moves a 10M-element array from range to hash partitioning
// and back, dense and sparse, and prints median time and bytes sent per rank.
//
//   strata-repartition-bench [--elements N] [--repeat R]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.hpp"
#include "strata/dist_array.hpp"

namespace {

template <class Array>
void measure(strata::Runtime& rt, const char* what, Array& a, int repeat) {
  std::vector<double> seconds;
  std::uint64_t bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    rt.comm().barrier();
    const auto sent_before = rt.comm().stats().bytes_sent;
    const auto t0 = std::chrono::steady_clock::now();
    a.repartition(strata::Partition::hash(0));
    rt.comm().barrier();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    bytes = rt.comm().stats().bytes_sent - sent_before;
    a.repartition(strata::Partition::range(0));
  }
  const auto total = rt.comm().allreduce<std::uint64_t>(bytes, strata::ReduceOp::sum);
  if (rt.rank() == 0)
    std::printf("%-34s %8.3f s median   %8.1f MB sent in total (%.1f MB per rank)\n", what,
                strata::bench::median(seconds), static_cast<double>(total) / 1e6,
                static_cast<double>(total) / 1e6 / rt.size());
}

}  // namespace

int main(int argc, char** argv) try {
  strata::Runtime rt(argc, argv);
  std::int64_t n = 10'000'000;
  int repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--elements") n = std::atoll(argv[i + 1]);
    else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
  }
  if (rt.rank() == 0)
    std::printf("machine: %s\n%d rank(s) x %d thread(s), %lld elements, median of %d runs\n",
                strata::bench::machine().c_str(), rt.size(), rt.threads(), static_cast<long long>(n), repeat);
  auto dense = strata::DistArray<float, 1>::rand(rt, {n});
  measure(rt, "dense float[10M] range->hash", dense, repeat);
  // A sparse 2-D array with n non-zeros spread over 200,000 rows.
  std::vector<strata::Entry<float, 2>> mine;
  const strata::CounterRng rng(3);
  for (std::int64_t k = rt.rank(); k < n; k += rt.size())
    mine.push_back({{k % 200'000, k / 200'000}, static_cast<float>(rng.uniform(static_cast<std::uint64_t>(k)))});
  auto sparse = strata::DistArray<float, 2>::sparse(rt, {200'000, (n + 199'999) / 200'000}, std::move(mine));
  measure(rt, "sparse float 10M nnz range->hash", sparse, repeat);
  return 0;
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-repartition-bench: %s\n", e.what());
  return 1;
}
