// One SGD matrix-factorisation pass at rank K over a rating file: Strata's
// parallel_for (2-D plan) against a hand-written serial loop running the same kernel
// (strata::kernels::sgd_mf_step) over the ratings in the same order, plus what
// planning costs: a full reconnaissance pass, and the path large loops take (a
// sampled pass and a first run that checks every access). Prints medians over
// repeated passes; all are timed alternately so the machine's drifting speed hits
// them alike.
//
//   strata-mf-bench FILE [--rank K] [--passes P] [--blocks-per-worker B] [--rounds R] [--slices S]
//                   [--strata-threads T]
//   mpirun -np 2 strata-mf-bench FILE --strata-threads=1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>

#include "bench_util.hpp"
#include "strata/io/load.hpp"
#include "strata/kernels.hpp"
#include "strata/loop/parallel_for.hpp"
#include "loop/inspect.hpp"  // the engine's phases one at a time (not API)

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int run(strata::Runtime& rt, const std::string& path, int K, int passes, const strata::LoopOptions& options) {
  auto R = strata::load_sparse<float, 2>(rt, path, strata::parse::triplets);
  R.set_name("R");
  auto W = strata::DistArray<float, 2>::randn(rt, {R.extent(0), K}, 0.1).set_name("W");
  auto H = strata::DistArray<float, 2>::randn(rt, {R.extent(1), K}, 0.1).set_name("H");
  const float lr = 0.005f, reg = 0.02f;
  auto body = [&](const strata::Index<2>& ij, float r) {
    strata::kernels::sgd_mf_step(W.row(ij[0]).data(), H.row(ij[1]).data(), K, r, lr, reg);
  };
  // One call site, so every call finds the plan the first one made.
  const auto site = std::source_location::current();
  auto pass = [&] { return strata::parallel_for(R, body, options, site); };
  // The first call plans the loop (reconnaissance + analysis + layout) and runs it.
  double t0 = now();
  const strata::LoopReport plan = pass();
  const double first_call = now() - t0;
  // The serial twin (one process only): plain vectors, same kernel, same order.
  // Its passes alternate with Strata's so drifting machine speed hits both alike.
  struct Rating {
    std::int64_t u, i;
    float r;
  };
  std::vector<Rating> order;
  // The twin's factors get huge pages too, as Strata's arrays do (a fair contest of
  // loop machinery, not of page sizes).
  auto huge_copy = [](const std::vector<float>& v) {
    auto out = strata::detail::make_huge<float>(v.size());
    std::copy(v.begin(), v.end(), out.begin());
    return out;
  };
  std::vector<float> w = huge_copy(W.gather()), h = huge_copy(H.gather());
  if (rt.size() == 1)
    for (const auto& ij : strata::equivalent_order(R, plan)) order.push_back({ij[0], ij[1], *R.find(ij)});
  std::vector<double> strata_s, serial_s, wait_s, recon_s, sample_s, verify_s;
  for (int p = 0; p < passes; ++p) {
    // The reconnaissance pass again, timed between passes like everything else (the
    // first call's figure is a single sample taken while the caches were cold).
    rt.comm().barrier();
    double t = now();
    strata::loop::detail::reconnoitre(R, body, false);
    recon_s.push_back(rt.comm().allreduce(now() - t, strata::ReduceOp::max));
    // The speculative first run, timed again too: the sampled reconnaissance, and a
    // run that checks every access against the plan (undone afterwards).
    if (plan.recon_stride > 1) {
      rt.comm().barrier();
      t = now();
      strata::loop::detail::reconnoitre(R, body, false, plan.recon_stride);
      sample_s.push_back(rt.comm().allreduce(now() - t, strata::ReduceOp::max));
      strata::detail::RunSnapshot before({&W, &H});
      strata::loop::Plan& same = strata::loop::detail::plan_of_loop(R, body, options, site);
      rt.comm().barrier();
      t = now();
      strata::loop::detail::run_plan(R, body, same, options, true);
      verify_s.push_back(rt.comm().allreduce(now() - t, strata::ReduceOp::max));
      before.restore();
    }
    rt.comm().barrier();
    t = now();
    const strata::LoopReport ran = pass();
    strata_s.push_back(now() - t);
    wait_s.push_back(ran.wait_seconds);
    if (order.empty()) continue;
    t = now();
    for (const auto& x : order)
      strata::kernels::sgd_mf_step(&w[static_cast<std::size_t>(x.u * K)], &h[static_cast<std::size_t>(x.i * K)], K, x.r,
                                   lr, reg);
    serial_s.push_back(now() - t);
  }
  const double strata_med = strata::bench::median(strata_s);
  const double serial_med = strata::bench::median(serial_s);
  const double rate = static_cast<double>(R.nnz()) / strata_med;
  if (!order.empty() && W.gather() != w)
    std::fprintf(stderr, "warning: the serial twin's model differs from Strata's\n");
  if (rt.rank() == 0) {
    std::printf("machine: %s; kernels: %s\n", strata::bench::machine().c_str(), strata::kernels::instruction_set());
    std::printf("%lld ratings, %lld users x %lld items, rank %d; %d rank(s) x %d thread(s); median of %d passes\n",
                static_cast<long long>(R.nnz()), static_cast<long long>(R.extent(0)),
                static_cast<long long>(R.extent(1)), K, rt.size(), rt.threads(), passes);
    std::printf("plan: %s, %d time blocks, %d round(s) over %d slice(s) per worker; reconnaissance %.3f s, "
                "planning %.3f s (first call, planning and one pass: %.3f s)\n",
                strata::analysis::to_string(plan.strategy).c_str(), plan.time_blocks, plan.rounds,
                plan.slices_per_worker, plan.recon_seconds, plan.plan_seconds, first_call);
    const double recon_med = strata::bench::median(recon_s);
    std::printf("strata pass: %.3f s  = %.1f M ratings/s; threads waited for blocks %.3f s\n", strata_med, rate / 1e6,
                strata::bench::median(wait_s));
    std::printf("full reconnaissance pass: %.3f s  = %.2f passes\n", recon_med, recon_med / strata_med);
    if (!sample_s.empty()) {
      const double sample = strata::bench::median(sample_s), verify = strata::bench::median(verify_s);
      std::printf("sampled reconnaissance (1 in %d): %.3f s; checked first run: %.3f s (+%.3f s); together %.2f "
                  "passes beyond the run itself\n",
                  plan.recon_stride, sample, verify, verify - strata_med, (sample + verify - strata_med) / strata_med);
    }
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
    std::fprintf(stderr,
                 "usage: strata-mf-bench FILE [--rank K] [--passes P] [--blocks-per-worker B] [--rounds R] [--slices S]\n");
    return 2;
  }
  int rank = 64, passes = 5;
  strata::LoopOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rank") rank = std::atoi(argv[i + 1]);
    else if (a == "--passes") passes = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--blocks-per-worker") options.blocks_per_worker = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--rounds") options.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--slices") options.slices_per_worker = std::max(1, std::atoi(argv[i + 1]));
    else throw strata::OptionError("unknown option " + a);
  }
  if (rank < 1) throw strata::OptionError("--rank must be a positive integer");
  return run(rt, argv[1], rank, passes, options);
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-mf-bench: %s\n", e.what());
  return 1;
}
