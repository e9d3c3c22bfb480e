// A small training program for the resume and replay tests
// (tests/cli/resume_probe_test.sh). Per pass it makes a loop call of every kind a
// checkpoint or a record must cover: a 2-D SGD loop writing two arrays in place, an
// irregular loop (conflict groups) whose updates do not commute, a buffered loop
// whose AdaGrad Buffer keeps owner state, a data-parallel loop over a relaxed array
// (bulk-synchronous, a clock every 7 iterations, floating-point deltas), a sync_for
// mini-batch loop, and a read-only loop feeding an Accumulator. It writes the losses
// and every array's final bytes to OUT (rank 0), so two runs can be compared byte for
// byte.
//   resume_probe OUT [--stop-after CALLS | --ssp | --managed | --hybrid] [--strata-... runtime options]
// --stop-after ends the process abruptly (exit 3) right after that many loop calls,
// as a crash would, without any cleanup. --ssp makes the relaxed array
// stale-synchronous (staleness 1), whose reads depend on timing: odd ranks sleep in
// its loop, so even ranks run ahead and read older clocks (rank 0 prints how often).
// --managed gives it managed communication instead, --hybrid Hybrid consistency (the
// rank's threads fold their deltas into its cache as they write them).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "strata/recovery.hpp"
#include "strata/runtime.hpp"
#include "strata/sync_for.hpp"

namespace {

using namespace strata;

template <class T, std::size_t N>
void append_array(std::string& out, const DistArray<T, N>& a) {
  const std::vector<T> all = a.gather();
  out.append(reinterpret_cast<const char*>(all.data()), all.size() * sizeof(T));
}

}  // namespace

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: resume_probe OUT [--stop-after CALLS]\n");
    return 2;
  }
  const std::string out_path = argv[1];
  const long stop_after = argc > 3 && std::strcmp(argv[2], "--stop-after") == 0 ? std::atol(argv[3]) : 0;
  const bool ssp = argc > 2 && std::strcmp(argv[2], "--ssp") == 0;
  const bool managed = argc > 2 && std::strcmp(argv[2], "--managed") == 0;
  const bool hybrid = argc > 2 && std::strcmp(argv[2], "--hybrid") == 0;
  auto maybe_crash = [&] {
    if (stop_after > 0 && recovery::loop_calls_made(rt) >= stop_after) {
      std::fflush(nullptr);
      _exit(3);
    }
  };

  constexpr std::int64_t rows = 60, cols = 40, K = 4;
  std::vector<Entry<float, 2>> entries;
  if (rt.rank() == 0)
    for (std::int64_t u = 0; u < rows; ++u)
      for (std::int64_t i = (u * 7) % 5; i < cols; i += 3)
        entries.push_back({{u, i}, static_cast<float>((u * 13 + i * 7) % 11) / 5.0f});
  auto R = DistArray<float, 2>::sparse(rt, {rows, cols}, std::move(entries));
  auto W = DistArray<float, 2>::randn(rt, {rows, K}, 0.1, 0.0, Partition::range(0), 1);
  auto H = DistArray<float, 2>::randn(rt, {cols, K}, 0.1, 0.0, Partition::range(0), 2);
  auto bias = DistArray<double, 1>::zeros(rt, {cols});
  auto G = DistArray<double, 1>::zeros(rt, {16});
  G.set_name("G");
  auto v = DistArray<double, 1>::zeros(rt, {4});
  W.set_name("W");
  H.set_name("H");
  bias.set_name("bias");
  v.set_name("v");
  Buffer<double, 1, apply::AdaGrad> bias_buf(bias, apply::adagrad(0.05));
  auto z = DistArray<double, 1>::zeros(rt, {cols});
  z.set_name("z");
  Buffer<double, 1> z_buf(z, apply::sum(),
                          ssp       ? strata::ssp(1).every(7)
                          : managed ? bsp().every(7).managed(2e5)
                          : hybrid  ? strata::hybrid().every(7)
                                    : bsp().every(7));
  Accumulator<double> loss(rt);
  auto rows_space = DistArray<float, 1>::fill(rt, {rows}, 1.0f);

  std::vector<double> losses;
  for (int pass = 0; pass < 4; ++pass) {
    parallel_for(R, [&](const Index<2>& ui, float r) {
      float* w = W.row(ui[0]).data();
      float* h = H.row(ui[1]).data();
      float e = r;
      for (int k = 0; k < K; ++k) e -= w[k] * h[k];
      for (int k = 0; k < K; ++k) {
        const float wk = w[k];
        w[k] += 0.05f * (e * h[k] - 0.01f * wk);
        h[k] += 0.05f * (e * wk - 0.01f * h[k]);
      }
    });
    maybe_crash();
    // Which element an iteration updates depends on the data: only the exact conflict
    // groups keep these dependences, and the updates do not commute.
    parallel_for(R, [&](const Index<2>& ui, float r) {
      const std::int64_t g = (ui[0] * 31 + ui[1] * 17) % 16;
      G({g}) = G({g}) * 0.5 + static_cast<double>(r);
    });
    maybe_crash();
    // Buffered writes land on elements every worker writes, so how the workers' sums
    // are combined shows in the last bits.
    parallel_for(R, [&](const Index<2>& ui, float r) {
      bias_buf.add({(ui[0] + 2 * ui[1]) % cols}, static_cast<double>(r) - 1.0);
    });
    maybe_crash();
    // Reads of z see the clocks before.
    parallel_for(R, [&](const Index<2>& ui, float r) {
      if (ssp && rt.rank() % 2 == 1 && !detail::t_recording) usleep(150);
      // The pump sends early every 10 ms: a clock this long lets it send the other
      // thread's deltas before the clock ends.
      if (managed && pass == 0 && ui[0] == 0 && !detail::t_recording) usleep(12000);
      const std::int64_t k = (ui[0] * 7 + ui[1]) % cols;
      z_buf.add({k}, 0.1 * (static_cast<double>(r) - z.read({k})) / 3.0);
    });
    maybe_crash();
    sync_for(rows_space, [&](const Index<1>& i, float x) { v({i[0] % 4}) += 0.001 * x * static_cast<double>(i[0]) / 3.0; },
             {.batch = 8}, synced(v, Combine::average));
    maybe_crash();
    parallel_for(R, [&](const Index<2>& ui, float r) {
      const auto w = W.read_row(ui[0]);
      const auto h = H.read_row(ui[1]);
      float e = r;
      for (int k = 0; k < K; ++k) e -= w[static_cast<std::size_t>(k)] * h[static_cast<std::size_t>(k)];
      loss += static_cast<double>(e) * e;
    });
    losses.push_back(loss.take());  // driver variable: must come out the same when resumed
    maybe_crash();
  }

  std::string out;
  out.append(reinterpret_cast<const char*>(losses.data()), losses.size() * sizeof(double));
  append_array(out, W);
  append_array(out, H);
  append_array(out, G);
  append_array(out, bias);
  append_array(out, z);
  append_array(out, v);
  if (rt.rank() == 0) {
    std::FILE* f = std::fopen(out_path.c_str(), "wb");
    if (!f || std::fwrite(out.data(), 1, out.size(), f) != out.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
      return 1;
    }
    std::printf("losses:");
    for (double l : losses) std::printf(" %.9g", l);
    std::printf("\nskipped %lld loop call(s)\n", static_cast<long long>(recovery::loop_calls_skipped(rt)));
    const auto lags = z_buf.stats().staleness_histogram;
    std::printf("clocks of z begun 0 and 1 clock(s) behind: %lld %lld\n",
                static_cast<long long>(lags.empty() ? 0 : lags[0]), static_cast<long long>(lags.size() < 2 ? 0 : lags[1]));
    std::printf("deltas of z sent early: %lld\n", static_cast<long long>(z_buf.stats().managed_deltas));
  }
  return 0;
}
