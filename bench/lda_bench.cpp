// LDA by collapsed Gibbs sampling on a synthetic corpus (apps/lda): Strata's
// parallel_for (2-D plan over documents and words, topic totals through a Buffer)
// against the serial program with live totals, passes timed alternately so the
// machine's drifting speed hits both alike. Prints medians over passes (the first,
// which plans the loop, apart) and the log-likelihood per token of every pass.
//
//   strata-lda-bench [--docs D] [--words V] [--topics K] [--doclen L] [--passes P]
//                    [--serial 0|1] [--data-parallel 0|1] [--blocks B (time blocks per worker; 0: auto)]
//                    [--rounds R (rounds of the time blocks per pass; 0: auto)]
//   mpirun -np 2 strata-lda-bench --strata-threads=1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "bench_util.hpp"
#include "lda/serial.hpp"
#include "lda/strata.hpp"

namespace {

using namespace strata::apps;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Args {
  lda::SyntheticSpec spec{100000, 10000, 100, 100};
  int passes = 6;
  bool serial = true, data_parallel = false;
  int blocks = 0, rounds = 0;
};

int run(strata::Runtime& rt, const Args& a) {
  double t = now();
  const lda::Problem p = lda::generate(a.spec, rt.seed());
  const double gen_s = now() - t;
  lda::Options o;
  o.topics = a.spec.topics;
  o.seed = rt.seed();
  o.blocks_per_worker = a.blocks;
  o.rounds = a.rounds;
  t = now();
  lda::StrataLda m(rt, p, o, a.data_parallel ? std::optional(strata::analysis::Strategy::data_parallel) : std::nullopt);
  const double setup_s = rt.comm().allreduce(now() - t, strata::ReduceOp::max);
  std::unique_ptr<lda::SerialLda> serial;
  if (a.serial && rt.size() == 1) serial = std::make_unique<lda::SerialLda>(p, o);
  std::vector<double> strata_s, serial_s, strata_ll, serial_ll;
  for (int pass = 0; pass < a.passes; ++pass) {
    rt.comm().barrier();
    t = now();
    m.pass();
    strata_s.push_back(rt.comm().allreduce(now() - t, strata::ReduceOp::max));
    strata_ll.push_back(m.loglik_per_token());
    if (!serial) continue;
    t = now();
    serial->pass();
    serial_s.push_back(now() - t);
    serial_ll.push_back(serial->loglik_per_token());
  }
  if (rt.rank() != 0) return 0;
  const auto tokens = static_cast<double>(p.tokens);
  auto median_after_first = [](std::vector<double> v) {
    return strata::bench::median(std::vector<double>(v.begin() + (v.size() > 1 ? 1 : 0), v.end()));
  };
  std::printf("machine: %s\n", strata::bench::machine().c_str());
  std::printf("%s; generated in %.2f s; %d topics; %d rank(s) x %d thread(s)\n", p.source.c_str(), gen_s, o.topics,
              rt.size(), rt.threads());
  const auto& report = m.report();
  std::printf("plan: %s, %d time blocks, %d round(s); setup %.2f s; first pass (with planning) %.3f s\n",
              strata::analysis::to_string(report.strategy).c_str(), report.time_blocks, report.rounds, setup_s,
              strata_s[0]);
  const double sm = median_after_first(strata_s);
  std::printf("strata pass: median %.3f s = %.2f M tokens/s\n", sm, tokens / sm / 1e6);
  if (serial) {
    const double se = median_after_first(serial_s);
    std::printf("serial pass: median %.3f s = %.2f M tokens/s (strata speed-up %.2fx)\n", se, tokens / se / 1e6,
                se / sm);
  }
  std::printf("pass  strata loglik/token%s\n", serial ? "  serial loglik/token  difference" : "");
  for (std::size_t i = 0; i < strata_ll.size(); ++i) {
    std::printf("%4zu  %19.4f", i + 1, strata_ll[i]);
    if (serial)
      std::printf("  %19.4f  %+9.2f %%", serial_ll[i], 100.0 * (strata_ll[i] - serial_ll[i]) / std::abs(serial_ll[i]));
    std::printf("\n");
  }
  return 0;
}

using strata::bench::number;

}  // namespace

int main(int argc, char** argv) try {
  strata::Runtime rt(argc, argv);
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string o = argv[i];
    if (i + 1 >= argc) throw strata::OptionError("option " + o + " needs a value");
    const long long v = number(o, argv[i + 1]);
    if (o == "--docs") a.spec.docs = std::max(1LL, v);
    else if (o == "--words") a.spec.words = std::max(1LL, v);
    else if (o == "--topics") a.spec.topics = static_cast<int>(std::max(1LL, v));
    else if (o == "--doclen") a.spec.doclen = std::max(1LL, v);
    else if (o == "--passes") a.passes = static_cast<int>(std::max(2LL, v));
    else if (o == "--serial") a.serial = v != 0;
    else if (o == "--data-parallel") a.data_parallel = v != 0;
    else if (o == "--blocks") a.blocks = static_cast<int>(v);
    else if (o == "--rounds") a.rounds = static_cast<int>(std::max(0LL, v));
    else throw strata::OptionError("unknown option " + o);
  }
  return run(rt, a);
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-lda-bench: %s\n", e.what());
  return 2;
}
