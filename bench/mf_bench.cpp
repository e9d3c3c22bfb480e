// One SGD matrix-factorisation pass at rank K over a rating file: Strata's
// parallel_for (2-D plan) against a hand-written serial loop running the same kernel
// over the ratings in the same order. Prints medians over repeated passes.
//
//   strata-mf-bench FILE [--rank K] [--passes P] [--strata-threads T]
//   mpirun -np 2 strata-mf-bench FILE --strata-threads=1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.hpp"
#include "strata/io/load.hpp"
#include "strata/loop/parallel_for.hpp"

namespace {

// The kernel of both versions: squared loss + L2, plain SGD step.
// The dot product keeps 8 partial sums so the compiler can vectorise it without
// -ffast-math (a single running sum fixes the order of additions).
template <int K>
inline void sgd(float* __restrict w, float* __restrict h, float r, float lr, float reg) {
  static_assert(K % 8 == 0);
  float part[8] = {};
  for (int k = 0; k < K; k += 8)
    for (int j = 0; j < 8; ++j) part[j] += w[k + j] * h[k + j];
  const float e = r - (((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7])));
  for (int k = 0; k < K; ++k) {
    const float wk = w[k];
    w[k] += lr * (e * h[k] - reg * wk);
    h[k] += lr * (e * wk - reg * h[k]);
  }
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <int K>
int run(strata::Runtime& rt, const std::string& path, int passes) {
  auto R = strata::load_sparse<float, 2>(rt, path, strata::parse::triplets);
  R.set_name("R");
  auto W = strata::DistArray<float, 2>::randn(rt, {R.extent(0), K}, 0.1).set_name("W");
  auto H = strata::DistArray<float, 2>::randn(rt, {R.extent(1), K}, 0.1).set_name("H");
  const float lr = 0.005f, reg = 0.02f;
  auto body = [&](const strata::Index<2>& ij, float r) {
    sgd<K>(W.row(ij[0]).data(), H.row(ij[1]).data(), r, lr, reg);
  };
  // The first call plans the loop (reconnaissance + analysis + layout) and runs it.
  double t0 = now();
  const strata::loop::Plan& plan = strata::parallel_for(R, body);
  const double first_call = now() - t0;
  // The serial twin (one process only): plain vectors, same kernel, same order.
  // Its passes alternate with Strata's so drifting machine speed hits both alike.
  struct Rating {
    std::int64_t u, i;
    float r;
  };
  std::vector<Rating> order;
  std::vector<float> w = W.gather(), h = H.gather();
  if (rt.size() == 1)
    for (const auto& ij : strata::equivalent_order(R, plan)) order.push_back({ij[0], ij[1], *R.find(ij)});
  std::vector<double> strata_s, serial_s;
  for (int p = 0; p < passes; ++p) {
    rt.comm().barrier();
    double t = now();
    strata::parallel_for(R, body);
    strata_s.push_back(now() - t);
    if (order.empty()) continue;
    t = now();
    for (const auto& x : order)
      sgd<K>(&w[static_cast<std::size_t>(x.u * K)], &h[static_cast<std::size_t>(x.i * K)], x.r, lr, reg);
    serial_s.push_back(now() - t);
  }
  const double strata_med = strata::bench::median(strata_s);
  const double serial_med = strata::bench::median(serial_s);
  const double rate = static_cast<double>(R.nnz()) / strata_med;
  if (!order.empty() && W.gather() != w)
    std::fprintf(stderr, "warning: the serial twin's model differs from Strata's\n");
  if (rt.rank() == 0) {
    std::printf("machine: %s\n", strata::bench::machine().c_str());
    std::printf("%lld ratings, %lld users x %lld items, rank %d; %d rank(s) x %d thread(s); median of %d passes\n",
                static_cast<long long>(R.nnz()), static_cast<long long>(R.extent(0)),
                static_cast<long long>(R.extent(1)), K, rt.size(), rt.threads(), passes);
    std::printf("plan: %s; reconnaissance %.3f s, planning %.3f s (first call, planning and one pass: %.3f s)\n",
                strata::analysis::to_string(plan.choice.strategy).c_str(), plan.recon_seconds, plan.plan_seconds,
                first_call);
    std::printf("strata pass: %.3f s  = %.1f M ratings/s  (reconnaissance / pass = %.2f)\n", strata_med, rate / 1e6,
                plan.recon_seconds / strata_med);
    if (serial_med > 0)
      std::printf("serial twin: %.3f s  = %.1f M ratings/s  (strata overhead %+.1f %%)\n", serial_med,
                  static_cast<double>(R.nnz()) / serial_med / 1e6, 100.0 * (strata_med / serial_med - 1.0));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  strata::Runtime rt(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: strata-mf-bench FILE [--rank 16|32|64|128] [--passes P]\n");
    return 2;
  }
  int rank = 64, passes = 5;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rank") rank = std::atoi(argv[i + 1]);
    else if (a == "--passes") passes = std::max(1, std::atoi(argv[i + 1]));
    else throw strata::OptionError("unknown option " + a);
  }
  switch (rank) {
    case 16: return run<16>(rt, argv[1], passes);
    case 32: return run<32>(rt, argv[1], passes);
    case 64: return run<64>(rt, argv[1], passes);
    case 128: return run<128>(rt, argv[1], passes);
  }
  throw strata::OptionError("--rank must be 16, 32, 64 or 128");
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-mf-bench: %s\n", e.what());
  return 1;
}
