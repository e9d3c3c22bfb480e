// The relaxed row path: an embedding-like probe that reads two 50-float rows of a
// model, takes their dot product and adds a scaled copy of each row to the other,
// run through a relaxed array (reads through a reader's read_row, adds through a
// writer's add_row, or a row struct's add) and, alternately, as the same body on a
// plain std::vector in one thread (the serial twin, updating in place). Prints the
// median pass time of each and the median of the passes' ratios, and the mean
// logistic loss of each pass so the two can be compared for progress too.
//
//   strata-rows-bench [--rows R] [--samples S] [--passes P] [--dim 50|...]
//                     [--consistency bsp|ssp|hybrid] [--staleness s] [--every N]
//                     [--read-my-writes 0|1] [--layout matrix|struct] [--lr X]
//   strata-rows-bench --strata-threads=2
//   mpirun -np 2 strata-rows-bench --strata-threads=1
//
// Samples: row a uniform over the rows, row b skewed toward low rows (b = R u^2 for
// u uniform, so some rows are hot, as frequent words are), label from a hash. Every
// rank generates the same samples from the seed. --layout struct (dim 50 only) uses a
// DistArray<Vec, 1> of `struct Vec { float v[50]; }` and adds whole Vecs.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "strata/random.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// This process's CPU seconds (all threads): on a shared machine a pass's wall time
// depends on the cores others leave it; its CPU time says what the work cost.
double cpu() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Pair {
  std::int64_t a, b;
  float label;
};

struct Options {
  std::int64_t rows = 100000, samples = 1000000, every = 0;
  int dim = 50, passes = 7, staleness = 0;
  std::string consistency = "bsp", layout = "matrix";
  bool read_my_writes = false;
  float lr = 0.05f;
};

struct Vec {
  float v[50];
  Vec& operator+=(const Vec& o) {
    for (int j = 0; j < 50; ++j) v[j] += o.v[j];
    return *this;
  }
};

inline float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }
inline double loss_of(float p, float y) {
  const double q = y > 0.5f ? p : 1.0f - p;
  return -std::log(std::max(q, 1e-7));
}

// The probe's step on two rows: g = lr (y - sigmoid(a.b)); da = g b, db = g a.
inline float step(const float* a, const float* b, float y, float lr, int dim, float* da, float* db) {
  float z = 0;
  for (int j = 0; j < dim; ++j) z += a[j] * b[j];
  const float p = sigmoid(z);
  const float g = lr * (y - p);
  for (int j = 0; j < dim; ++j) {
    da[j] = g * b[j];
    db[j] = g * a[j];
  }
  return p;
}

float initial(std::int64_t k) {
  return static_cast<float>((strata::CounterRng(17).uniform(static_cast<std::uint64_t>(k)) - 0.5) * 0.2);
}

strata::Consistency consistency_of(const Options& o) {
  strata::Consistency c = o.consistency == "hybrid" ? strata::hybrid() : strata::ssp(o.staleness);
  if (o.consistency == "bsp") c = strata::bsp();
  c.every(o.every);
  if (o.read_my_writes) c.read_my_writes();
  return c;
}

int run(strata::Runtime& rt, const Options& o) {
  const int D = o.dim;
  std::vector<Pair> pairs(static_cast<std::size_t>(o.samples));
  for (std::int64_t i = 0; i < o.samples; ++i) {
    const auto h = strata::mix64(static_cast<std::uint64_t>(i) * 3 + rt.seed());
    const double u = strata::CounterRng(rt.seed()).uniform(static_cast<std::uint64_t>(i));
    pairs[static_cast<std::size_t>(i)] = {static_cast<std::int64_t>(h % static_cast<std::uint64_t>(o.rows)),
                                          static_cast<std::int64_t>(u * u * static_cast<double>(o.rows)) % o.rows,
                                          static_cast<float>(h >> 63)};
  }
  auto space = strata::DistArray<Pair, 1>::generate(
      rt, {o.samples}, [&](const strata::Index<1>& i) { return pairs[static_cast<std::size_t>(i[0])]; });
  const bool as_struct = o.layout == "struct";
  auto m = strata::DistArray<float, 2>::generate(rt, {as_struct ? 1 : o.rows, D}, [&](const strata::Index<2>& i) {
    return initial(i[0] * D + i[1]);
  });
  auto mv = strata::DistArray<Vec, 1>::generate(rt, {as_struct ? o.rows : 1}, [&](const strata::Index<1>& i) {
    Vec v;
    for (int j = 0; j < 50; ++j) v.v[j] = initial(i[0] * 50 + j);
    return v;
  });
  std::optional<strata::Buffer<float, 2>> buf;
  std::optional<strata::Buffer<Vec, 1>> vbuf;
  if (as_struct) vbuf.emplace(mv, strata::apply::sum(), consistency_of(o));
  else buf.emplace(m, strata::apply::sum(), consistency_of(o));
  strata::Accumulator<double> loss(rt);
  auto matrix_body = [&](const strata::Index<1>&, const Pair& s) {
    const auto r = m.reader();
    float da[256], db[256];
    const float p = step(r.read_row(s.a).data(), r.read_row(s.b).data(), s.label, o.lr, D, da, db);
    loss += loss_of(p, s.label);
    const auto w = buf->writer();
    w.add_row(s.a, std::span<const float>(da, static_cast<std::size_t>(D)));
    w.add_row(s.b, std::span<const float>(db, static_cast<std::size_t>(D)));
  };
  auto struct_body = [&](const strata::Index<1>&, const Pair& s) {
    const auto r = mv.reader();
    Vec da, db;
    const float p = step(r.read({s.a}).v, r.read({s.b}).v, s.label, o.lr, 50, da.v, db.v);
    loss += loss_of(p, s.label);
    const auto w = vbuf->writer();
    w.add({s.a}, da);
    w.add({s.b}, db);
  };
  // The serial twin: the same samples in the same order, rows updated in place.
  const bool twin = rt.size() == 1;
  std::vector<float> plain(twin ? static_cast<std::size_t>(o.rows * D) : 0);
  for (std::size_t k = 0; k < plain.size(); ++k) plain[k] = initial(static_cast<std::int64_t>(k));
  auto twin_pass = [&] {
    double l = 0;
    float da[256], db[256];
    for (const Pair& s : pairs) {
      float* a = plain.data() + s.a * D;
      float* b = plain.data() + s.b * D;
      const float p = step(a, b, s.label, o.lr, D, da, db);
      l += loss_of(p, s.label);
      for (int j = 0; j < D; ++j) a[j] += da[j];
      for (int j = 0; j < D; ++j) b[j] += db[j];
    }
    return l / static_cast<double>(o.samples);
  };
  const auto site = std::source_location::current();
  std::vector<double> strata_s, strata_loss, twin_s, twin_loss, speedups, strata_cpu, twin_cpu;
  double first_call = 0;
  for (int p = 0; p < o.passes; ++p) {
    rt.comm().barrier();
    double t = now(), c = cpu();
    if (as_struct) strata::parallel_for(space, struct_body, {}, site);
    else strata::parallel_for(space, matrix_body, {}, site);
    const double secs = rt.comm().allreduce(now() - t, strata::ReduceOp::max);
    if (p == 0) first_call = secs;
    else strata_s.push_back(secs);
    if (p > 0) strata_cpu.push_back(cpu() - c);
    strata_loss.push_back(loss.take() / static_cast<double>(o.samples));
    if (!twin) continue;
    t = now();
    c = cpu();
    twin_loss.push_back(twin_pass());
    if (p > 0) {
      twin_cpu.push_back(cpu() - c);
      twin_s.push_back(now() - t);
      speedups.push_back(twin_s.back() / secs);
    }
  }
  const auto st = as_struct ? vbuf->stats() : buf->stats();
  if (rt.rank() == 0) {
    std::printf("machine: %s\n", strata::bench::machine().c_str());
    std::printf("%lld rows of %d floats (%s), %lld samples; %d rank(s) x %d thread(s); %s, staleness %d, clock every "
                "%lld iterations per worker, read-my-writes %s\n",
                static_cast<long long>(o.rows), D,
                as_struct ? "DistArray<Vec, 1>, add" : "DistArray<float, 2>, add_row",
                static_cast<long long>(o.samples), rt.size(), rt.threads(), o.consistency.c_str(),
                o.consistency == "ssp" ? o.staleness : 0, static_cast<long long>(o.every),
                o.read_my_writes ? "on" : "off");
    std::printf("first call (reconnaissance, planning, caches, one pass): %.3f s\n", first_call);
    const double med = strata::bench::median(strata_s);
    std::printf("strata: median pass %.3f s over %zu passes, %.2f M samples/s; rank 0's CPU time per pass %.3f s\n",
                med, strata_s.size(), med > 0 ? static_cast<double>(o.samples) / med / 1e6 : 0.0,
                strata::bench::median(strata_cpu));
    if (!twin_s.empty()) {
      const double twin_med = strata::bench::median(twin_s);
      std::printf("serial twin: median pass %.3f s, %.2f M samples/s, CPU time %.3f s; serial time / strata time %.2f "
                  "(median of the passes' ratios; each Strata pass is followed by a serial one)\n",
                  twin_med, static_cast<double>(o.samples) / twin_med / 1e6, strata::bench::median(twin_cpu),
                  strata::bench::median(speedups));
    }
    std::printf("rank 0: %lld clocks, cache hit rate %.4f, %.1f MB in %lld messages sent, %.3f s blocked\n",
                static_cast<long long>(st.clocks), st.cache_hit_rate(), static_cast<double>(st.bytes_sent) / 1e6,
                static_cast<long long>(st.messages_sent), st.blocked_seconds);
    strata::bench::print_pass_table("loss", strata_loss, twin_loss);
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
    if (a == "--rows") o.rows = std::max<std::int64_t>(2, number(a, v));
    else if (a == "--samples") o.samples = std::max<std::int64_t>(1, number(a, v));
    else if (a == "--passes") o.passes = static_cast<int>(std::max<std::int64_t>(2, number(a, v)));
    else if (a == "--dim") o.dim = static_cast<int>(std::clamp<std::int64_t>(number(a, v), 1, 256));
    else if (a == "--staleness") o.staleness = static_cast<int>(number(a, v));
    else if (a == "--every") o.every = number(a, v);
    else if (a == "--read-my-writes") o.read_my_writes = number(a, v) != 0;
    else if (a == "--lr") o.lr = static_cast<float>(std::atof(v));
    else if (a == "--consistency") {
      o.consistency = v;
      if (o.consistency != "bsp" && o.consistency != "ssp" && o.consistency != "hybrid")
        throw strata::OptionError("--consistency is bsp, ssp or hybrid, not '" + o.consistency + "'");
    } else if (a == "--layout") {
      o.layout = v;
      if (o.layout != "matrix" && o.layout != "struct")
        throw strata::OptionError("--layout is matrix or struct, not '" + o.layout + "'");
    } else {
      throw strata::OptionError("unknown option " + a);
    }
  }
  if (o.layout == "struct" && o.dim != 50) throw strata::OptionError("--layout struct has rows of 50 floats: --dim 50");
  return run(rt, o);
} catch (const strata::Error& e) {
  std::fprintf(stderr, "strata-rows-bench: %s\n", e.what());
  return 2;
}
