// Sparse logistic regression by SGD on synthetic data: the weights are a relaxed
// array (a Buffer with a Consistency), so the loop runs data-parallel on the
// parameter server. Compares, per pass: Strata with static caches and one bulk
// block per owner and clock ("prefetch") or with every read a request to the
// owner ("per-element"), and a serial twin in plain C++ (AdaGrad applied after
// every sample). Prints medians over passes and the progressive log-loss of each pass.
//
//   strata-slr-bench [--samples S] [--features F] [--nnz Z] [--passes P]
//                    [--mode prefetch|per-element] [--staleness s] [--every N] [--lr R]
//                    [--budget BYTES_PER_S] [--priority relative|absolute|random|round-robin]
//                    [--apply adagrad|adarevision]
//   mpirun -np 2 strata-slr-bench --strata-threads=1
//
// Data: the slr app's generator (apps/slr/problem.hpp): about Z binary features per
// sample with power-law frequencies, labels from a planted logistic model; every
// rank generates the same data from the seed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_util.hpp"
#include "slr/problem.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

using strata::apps::slr::Sample;
using strata::apps::slr::sigmoid;

double log_loss(float p, float y) {
  double loss = 0;
  std::int64_t correct = 0;
  strata::apps::slr::measure(p, y, loss, correct);
  return loss;
}

struct Options {
  std::int64_t samples = 1000000, features = 1000000;
  int nnz = 50, passes = 5, staleness = 0;
  std::int64_t every = 0;
  bool prefetch = true;
  float lr = 0.1f;
  std::int64_t budget = 0;  // managed communication, bytes per second; 0: off
  strata::Priority priority = strata::Priority::relative_magnitude;
  bool adarevision = false;  // the owners' rule; the serial twin always runs AdaGrad
};

template <class Apply>
int run(strata::Runtime& rt, const Options& o, Apply apply) {
  double t = now();
  const strata::apps::slr::Problem data =
      strata::apps::slr::generate({o.samples, o.features, o.nnz}, 0.0, rt.seed());
  const double gen_s = now() - t;
  auto space = strata::DistArray<Sample, 1>::generate(
      rt, {o.samples}, [&](const strata::Index<1>& i) { return data.train[static_cast<std::size_t>(i[0])]; });
  auto w = strata::DistArray<float, 1>::zeros(rt, {o.features}).set_name("w");
  strata::Consistency consistency = strata::ssp(o.staleness).every(o.every);
  if (!o.prefetch) consistency.without_prefetch();
  if (o.budget > 0) consistency.managed(static_cast<double>(o.budget), o.priority);
  // AdaGrad at the owners: each weight's step shrinks with its squared gradients,
  // so the hot features (a power law makes some very hot) do not overshoot when a
  // clock sums many samples' gradients.
  strata::Buffer wbuf(w, apply, consistency);
  strata::Accumulator<double> loss(rt);
  const std::int32_t* feat = data.feature.data();
  auto body = [&](const strata::Index<1>&, const Sample& s) {
    const auto wr = w.reader();
    float z = 0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) z += wr.read({feat[k]});
    const float p = sigmoid(z);
    loss += log_loss(p, s.label);
    const float g = p - s.label;
    const auto wb = wbuf.writer();
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) wb.add({feat[k]}, g);
  };
  // The serial twin: the same samples in the same order, updates applied at once.
  // Its passes alternate with Strata's, so each speed-up compares two passes run a
  // second apart (timings on a shared machine drift by more than the effect).
  const bool twin = rt.size() == 1;
  std::vector<float> v(twin ? static_cast<std::size_t>(o.features) : 0, 0.0f);
  std::vector<double> squares(v.size(), 0.0);
  const strata::apply::AdaGrad adagrad{o.lr};
  auto twin_pass = [&] {
    double l = 0;
    for (const Sample& s : data.train) {
      float z = 0;
      for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) z += v[static_cast<std::size_t>(feat[k])];
      const float pr = sigmoid(z);
      l += log_loss(pr, s.label);
      const float g = pr - s.label;
      for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) {
        const auto f = static_cast<std::size_t>(feat[k]);
        strata::apply::AdaGrad::state_type st{squares[f]};
        adagrad(v[f], st, g);
        squares[f] = st.squares;
      }
    }
    return l / static_cast<double>(o.samples);
  };
  const auto site = std::source_location::current();
  std::vector<double> strata_s, strata_loss, twin_s, twin_loss, speedups;
  double first_call = 0;
  for (int p = 0; p < o.passes; ++p) {
    rt.comm().barrier();
    t = now();
    strata::parallel_for(space, body, {}, site);
    const double secs = rt.comm().allreduce(now() - t, strata::ReduceOp::max);
    if (p == 0) first_call = secs;
    else strata_s.push_back(secs);
    strata_loss.push_back(loss.take() / static_cast<double>(o.samples));
    if (!twin) continue;
    t = now();
    twin_loss.push_back(twin_pass());
    if (p > 0) {
      twin_s.push_back(now() - t);
      speedups.push_back(twin_s.back() / secs);
    }
  }
  const auto st = wbuf.stats();
  if (rt.rank() == 0) {
    std::printf("machine: %s\n", strata::bench::machine().c_str());
    std::printf("%lld samples, %lld features, about %d non-zeros each (%zu in all; generated in %.2f s); %d rank(s) x "
                "%d thread(s); %s, staleness %d, clock every %lld iterations per worker, managed communication %s, "
                "%s at the owners\n",
                static_cast<long long>(o.samples), static_cast<long long>(o.features), o.nnz, data.feature.size(),
                gen_s, rt.size(), rt.threads(), o.prefetch ? "prefetch (static caches)" : "per-element remote reads",
                o.staleness, static_cast<long long>(o.every),
                o.budget > 0 ? fmt::format("{} bytes/s", o.budget).c_str() : "off",
                o.adarevision ? "AdaRevision" : "AdaGrad");
    std::printf("first call (reconnaissance, planning, caches, one pass): %.3f s\n", first_call);
    const double med = strata::bench::median(strata_s);
    std::printf("strata: median pass %.3f s over %zu passes, %.2f M samples/s\n", med, strata_s.size(),
                med > 0 ? static_cast<double>(o.samples) / med / 1e6 : 0.0);
    if (!twin_s.empty()) {
      const double twin_med = strata::bench::median(twin_s);
      std::printf("serial twin: median pass %.3f s, %.2f M samples/s; strata speed-up %.2fx (median of the passes' "
                  "ratios; each Strata pass is followed by a serial one)\n",
                  twin_med, static_cast<double>(o.samples) / twin_med / 1e6, strata::bench::median(speedups));
    }
    std::printf("rank 0: %lld clocks, cache hit rate %.4f (%lld cached reads, %lld dynamic), %.1f MB in %lld messages "
                "sent, %.3f s blocked\n",
                static_cast<long long>(st.clocks), st.cache_hit_rate(), static_cast<long long>(st.cache_reads),
                static_cast<long long>(st.dynamic_reads), static_cast<double>(st.bytes_sent) / 1e6,
                static_cast<long long>(st.messages_sent), st.blocked_seconds);
    if (o.budget > 0)
      std::printf("rank 0 managed communication: %.1f MB in %lld messages (%lld deltas sent early)\n",
                  static_cast<double>(st.managed_bytes) / 1e6, static_cast<long long>(st.managed_messages),
                  static_cast<long long>(st.managed_deltas));
    strata::bench::print_pass_table("log-loss", strata_loss, twin_loss);
  }
  return 0;
}

using strata::bench::number;

}  // namespace

int main(int argc, char** argv) try {
  strata::Runtime rt(argc, argv);
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw strata::OptionError("option " + a + " needs a value");
    const char* v = argv[++i];
    if (a == "--samples") o.samples = std::max<std::int64_t>(1, number(a, v));
    else if (a == "--features") o.features = std::max<std::int64_t>(1, number(a, v));
    else if (a == "--nnz") o.nnz = static_cast<int>(std::max<std::int64_t>(1, number(a, v)));
    else if (a == "--passes") o.passes = static_cast<int>(std::max<std::int64_t>(2, number(a, v)));
    else if (a == "--staleness") o.staleness = static_cast<int>(number(a, v));
    else if (a == "--every") o.every = number(a, v);
    else if (a == "--lr") {
      char* end = nullptr;
      o.lr = std::strtof(v, &end);
      if (!v[0] || *end || !(o.lr > 0)) throw strata::OptionError(std::string("--lr needs a positive number, not '") + v + "'");
    } else if (a == "--budget") o.budget = number(a, v);
    else if (a == "--apply") {
      const std::string p = v;
      if (p == "adagrad" || p == "adarevision") o.adarevision = p == "adarevision";
      else throw strata::OptionError("--apply is adagrad or adarevision, not '" + p + "'");
    }
    else if (a == "--priority") {
      const std::string p = v;
      if (p == "relative") o.priority = strata::Priority::relative_magnitude;
      else if (p == "absolute") o.priority = strata::Priority::absolute_magnitude;
      else if (p == "random") o.priority = strata::Priority::random;
      else if (p == "round-robin") o.priority = strata::Priority::round_robin;
      else throw strata::OptionError("--priority is relative, absolute, random or round-robin, not '" + p + "'");
    }
    else if (a == "--mode") {
      if (std::string(v) == "prefetch") o.prefetch = true;
      else if (std::string(v) == "per-element") o.prefetch = false;
      else throw strata::OptionError(std::string("--mode is prefetch or per-element, not '") + v + "'");
    } else {
      throw strata::OptionError("unknown option " + a);
    }
  }
  return o.adarevision ? run(rt, o, strata::apply::adarevision(o.lr)) : run(rt, o, strata::apply::adagrad(o.lr));
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-slr-bench: %s\n", e.what());
  return 2;
}
