// The cost of keeping a conflict-groups plan true (docs/loops.md, "Plans that stay
// true") on a negative-sampling embedding probe: edges inside communities of nodes,
// each pulling its two rows together and pushing a negative row of the community the
// epoch pairs with the edge's away. Prints medians of:
//   * the serial loop on plain vectors (the twin),
//   * a plain run by the groups plan, unchecked (what a call cost before plans were
//     re-validated; the engine no longer runs such a plan this way),
//   * a call whose accesses match the plan: snapshot, run with every access claimed,
//   * a call whose negatives moved since the last: a refused run, undone, a new
//     plan, and its checked run; and later such calls (after two, the loop may go
//     serial, when planning again costs more than one thread would).
//
//   strata-irregular-bench [--communities C] [--size S] [--edges N] [--dim D] [--repeat R] [--key-order 1]
//                          [--strata-threads=T]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "bench_util.hpp"
#include "loop/inspect.hpp"
#include "strata/loop/parallel_for.hpp"

namespace {

using strata::Index;

struct Probe {
  std::int64_t communities = 512, size = 64, edges = 2'000'000;
  int dim = 32;
  std::int64_t nodes() const { return communities * size; }
  // The negative of edge (u, v) in `epoch`: a node of the community (u's) ^ (epoch % 4).
  std::int64_t negative(std::int64_t u, std::int64_t v, std::uint64_t epoch) const {
    const std::int64_t c = (u / size) ^ static_cast<std::int64_t>(epoch % 4);
    const auto pick = strata::CounterRng(epoch + 11).below(static_cast<std::uint64_t>(u * nodes() + v),
                                                           static_cast<std::uint64_t>(size));
    return c * size + static_cast<std::int64_t>(pick);
  }
  void step(float* u, float* v, float* neg) const {
    float pos = 0, bad = 0;
    for (int k = 0; k < dim; ++k) pos += u[k] * v[k], bad += u[k] * neg[k];
    const float gp = 0.025f * (1.0f - 1.0f / (1.0f + std::exp(-pos)));
    const float gn = -0.025f / (1.0f + std::exp(-bad));
    for (int k = 0; k < dim; ++k) {
      const float uk = u[k];
      u[k] += gp * v[k] + gn * neg[k];
      v[k] += gp * uk;
      neg[k] += gn * uk;
    }
  }
};

}  // namespace

int main(int argc, char** argv) try {
  using strata::bench::seconds_of;
  strata::Runtime rt(argc, argv);
  Probe p;
  int repeat = 7;
  bool key_order = false;
  for (int k = 1; k < argc; k += 2) {
    const std::string a = argv[k];
    if (k + 1 >= argc) throw strata::OptionError("option " + a + " needs a value");
    const std::int64_t v = strata::bench::number(a, argv[k + 1]);
    if (a == "--communities") p.communities = v;
    else if (a == "--size") p.size = v;
    else if (a == "--edges") p.edges = v;
    else if (a == "--dim") p.dim = static_cast<int>(v);
    else if (a == "--repeat") repeat = static_cast<int>(v);
    else if (a == "--key-order") key_order = v != 0;
    else throw strata::OptionError("unknown option " + a);
  }
  if (p.communities < 1 || p.size < 1 || p.dim < 1 || repeat < 1 || p.edges > p.communities * p.size * p.size)
    throw strata::OptionError("--communities, --size, --dim and --repeat must be positive, and --edges at most "
                              "communities x size x size");
  std::vector<strata::Entry<float, 2>> mine;
  std::vector<std::array<std::int64_t, 2>> all;
  if (rt.rank() == 0) {
    std::map<Index<2>, float> edges;
    strata::RandomStream rs(23);
    while (static_cast<std::int64_t>(edges.size()) < p.edges) {
      const auto c = static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(p.communities))) * p.size;
      const auto u = c + static_cast<std::int64_t>(rs.below(4) == 0 ? 0 : rs.below(static_cast<std::uint64_t>(p.size)));
      edges[{u, c + static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(p.size)))}] = 1.0f;
    }
    for (const auto& [k, w] : edges) mine.push_back({k, w}), all.push_back({k[0], k[1]});
  }
  auto E = strata::DistArray<float, 2>::sparse(rt, {p.nodes(), p.nodes()}, mine);
  auto emb = strata::DistArray<float, 2>::randn(rt, {p.nodes(), p.dim}, 0.1, 0.0, strata::Partition::range(0), 41);
  std::uint64_t epoch = 0;
  auto body = [&](const Index<2>& e, float) {
    p.step(emb.row(e[0]).data(), emb.row(e[1]).data(), emb.row(p.negative(e[0], e[1], epoch)).data());
  };
  std::vector<double> twin, plain, holds, moved;
  // The serial twin over the edges in key order, on a plain vector.
  std::vector<float> ref = emb.gather();
  if (rt.rank() == 0)
    for (int r = 0; r < repeat; ++r)
      twin.push_back(seconds_of([&] {
        for (const auto& e : all)
          p.step(&ref[static_cast<std::size_t>(e[0] * p.dim)], &ref[static_cast<std::size_t>(e[1] * p.dim)],
                 &ref[static_cast<std::size_t>(p.negative(e[0], e[1], 0) * p.dim)]);
      }));
  // A plain run by the plan of epoch 0, without any check, alternating with calls
  // whose accesses match their plan (epoch 0 every time), so both see the same machine.
  strata::LoopOptions options;
  options.key_order = key_order;
  auto& plan = strata::loop::detail::plan_of_loop(E, body, options, std::source_location::current());
  // One call site for every call below, so they share the plan cache's entry.
  auto call = [&] { return strata::parallel_for(E, body, options); };
  strata::LoopReport report = call();
  for (int r = 0; r < repeat; ++r) {
    plain.push_back(seconds_of([&] { strata::loop::detail::run_plan(E, body, plan, options, false); }));
    holds.push_back(seconds_of([&] { report = call(); }));
  }
  const std::string explained = report.explain();
  const std::int64_t groups = report.groups;  // of the plan that holds (the calls below end serial)
  // Then calls whose negatives moved (a new epoch each time).
  for (int r = 0; r < repeat; ++r) {
    ++epoch;
    moved.push_back(seconds_of([&] { report = call(); }));
  }
  if (rt.rank() == 0) {
    using strata::bench::median;
    std::printf("irregular probe: %lld edges, %lld nodes in %lld communities, dim %d; %d rank(s) x %d thread(s); %s\n",
                static_cast<long long>(p.edges), static_cast<long long>(p.nodes()),
                static_cast<long long>(p.communities), p.dim, rt.size(), rt.threads(),
                strata::bench::machine().c_str());
    std::printf("  %lld conflict groups, %s; medians of %d\n", static_cast<long long>(groups),
                key_order ? "key order" : "shuffled order", repeat);
    std::printf("  serial twin (plain vectors)          %8.4f s\n", median(twin));
    const double base = median(plain);
    std::printf("  plain run by the plan, unchecked     %8.4f s\n", base);
    std::printf("  call, accesses match the plan        %8.4f s  (%+.1f %% of the plain run)\n", median(holds),
                100.0 * (median(holds) - base) / base);
    std::printf("  call, negatives moved: re-planned    %8.4f s  (%.2fx the plain run; the first such call)\n",
                moved[0], moved[0] / base);
    const std::vector<double> later(moved.begin() + std::min<std::size_t>(3, moved.size() - 1), moved.end());
    std::printf("  later calls, negatives still moving  %8.4f s  (%.2fx the plain run; %s)\n", median(later),
                median(later) / base,
                report.serial_reason.empty() ? "still groups" : "the loop went serial");
    if (std::getenv("STRATA_BENCH_EXPLAIN")) std::fputs(explained.c_str(), stdout);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-irregular-bench: %s\n", e.what());
  return 1;
}
