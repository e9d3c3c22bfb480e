// A skewed wavefront on every rank (src/loop/wavefront_ranks.hpp): a Gauss-Seidel
// sweep over a grid whose cell also reads its upper-right neighbour, so the plan must
// skew, plus a feature distance per cell (read-only rows X[i], Y[j] of --dim floats)
// as the work of a DTW-like programme. Prints the median seconds of a call for the
// serial twin (plain vectors) and for Strata on this layout (after one warm call),
// the plan's layout and the bytes it moved, and whether every call equalled the twin
// bit for bit.
//
//   strata-wavefront-bench [--rows N] [--cols M] [--dim D] [--repeat R] [--strata-threads=T]
//   mpirun -np 2 strata-wavefront-bench ... --strata-threads=1
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "strata/loop/parallel_for.hpp"

namespace {

struct Grid {
  std::int64_t rows = 1500, cols = 1500;
  int dim = 16;
  double feature(std::int64_t row, int k, std::uint64_t salt) const {
    return static_cast<double>(strata::mix64(static_cast<std::uint64_t>(row * dim + k) ^ salt) %
                               1000) *
           1e-3;
  }
  // The cell's new value from its neighbours, its old value and its features' distance.
  static double cell(double up, double left, double up_right, double here, const double* x,
                     const double* y, int dim) {
    double d = 0;
    for (int k = 0; k < dim; ++k) d += (x[k] - y[k]) * (x[k] - y[k]);
    return 0.25 * (up + left + up_right + here) + 1e-3 * std::sqrt(d);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  using strata::bench::median;
  using strata::bench::seconds_of;
  strata::Runtime rt(argc, argv);
  Grid g;
  int repeat = 5;
  strata::bench::for_each_option(argc, argv, [&](const std::string& option, const char* value) {
    const std::int64_t v = strata::bench::number(option, value);
    if (option == "--rows")
      g.rows = v;
    else if (option == "--cols")
      g.cols = v;
    else if (option == "--dim")
      g.dim = static_cast<int>(v);
    else if (option == "--repeat")
      repeat = static_cast<int>(v);
    else
      throw strata::OptionError("unknown option " + option);
  });
  if (g.rows < 2 || g.cols < 3 || g.dim < 1 || repeat < 1)
    throw strata::OptionError(
        "--rows must be at least 2, --cols at least 3, --dim and --repeat positive");
  const std::int64_t n = g.rows, m = g.cols;
  auto X = strata::DistArray<double, 2>::generate(rt, {n, g.dim}, [&](const strata::Index<2>& i) {
    return g.feature(i[0], static_cast<int>(i[1]), 1);
  });
  auto Y = strata::DistArray<double, 2>::generate(rt, {m, g.dim}, [&](const strata::Index<2>& i) {
    return g.feature(i[0], static_cast<int>(i[1]), 2);
  });
  auto A = strata::DistArray<double, 2>::generate(rt, {n, m}, [&](const strata::Index<2>& i) {
    return static_cast<double>((i[0] * 7 + i[1] * 3) % 11) * 0.1;
  });
  A.set_name("A");
  auto space = strata::DistArray<std::uint8_t, 2>::zeros(rt, {n, m});
  std::vector<double> twin = A.gather();
  const std::vector<double> xs = X.gather(), ys = Y.gather();
  strata::LoopOptions ordered;
  ordered.ordered = true;
  auto call = [&] {
    return strata::parallel_for(
        space,
        [&](const strata::Index<2>& ij, std::uint8_t) {
          const auto i = ij[0], j = ij[1];
          if (i == 0 || j == 0 || j == m - 1) return;
          const auto x = X.read_row(i), y = Y.read_row(j);
          A.write(ij, Grid::cell(A.read({i - 1, j}), A.read({i, j - 1}), A.read({i - 1, j + 1}),
                                 A.read(ij), x.data(), y.data(), g.dim));
        },
        ordered);
  };
  auto twin_call = [&] {
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 1; j + 1 < m; ++j) {
        auto at = [&](std::int64_t a, std::int64_t b) -> double& {
          return twin[static_cast<std::size_t>(a * m + b)];
        };
        at(i, j) = Grid::cell(at(i - 1, j), at(i, j - 1), at(i - 1, j + 1), at(i, j),
                              &xs[static_cast<std::size_t>(i * g.dim)],
                              &ys[static_cast<std::size_t>(j * g.dim)], g.dim);
      }
  };
  std::vector<double> strata_s, twin_s;
  strata::LoopReport report;
  const double first = seconds_of([&] { report = call(); });
  twin_call();
  bool equal = A.gather() == twin;
  for (int r = 0; r < repeat; ++r) {
    strata_s.push_back(seconds_of([&] { report = call(); }));
    twin_s.push_back(seconds_of(twin_call));
    equal = equal && A.gather() == twin;
  }
  // Each rank's last call: its run and the seconds its threads waited, in rank order.
  const auto per_rank = rt.comm().allgatherv(std::as_bytes(
      std::span<const double>(std::vector<double>{report.run_seconds, report.wait_seconds})));
  if (rt.rank() == 0) {
    std::printf("wavefront: %lld x %lld grid, %d features a row; %d rank(s) x %d thread(s); %s\n",
                static_cast<long long>(n), static_cast<long long>(m), g.dim, rt.size(),
                rt.threads(), strata::bench::machine().c_str());
    std::printf(
        "  strategy %s, %s; bytes moved per call %lld; medians of %d\n",
        strata::analysis::to_string(report.strategy).c_str(),
        report.gathered ? "gathered on rank 0" : (rt.size() > 1 ? "on every rank" : "one rank"),
        static_cast<long long>(report.bytes_moved), repeat);
    std::printf("  serial twin (plain vectors)  %8.4f s\n", median(twin_s));
    std::printf("  strata call                  %8.4f s  (%.2fx the twin; first call %.4f s)\n",
                median(strata_s), median(twin_s) / median(strata_s), first);
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      double v[2];
      std::memcpy(v, per_rank[r].data(), sizeof v);
      std::printf(
          "  last call on rank %zu: run %.4f s, of which its threads waited for blocks %.4f s\n", r,
          v[0], v[1]);
    }
    std::printf("  every call equals the twin bit for bit: %s\n", equal ? "yes" : "NO");
  }
  return equal ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-wavefront-bench: %s\n", e.what());
  return 1;
}
