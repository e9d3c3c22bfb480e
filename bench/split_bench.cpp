// A TransE-shaped loop through a split conflict group (docs/loops.md, "Split
// groups"): each triple moves its head, tail and relation rows and the row of a
// negative drawn from the epoch. The 26 relation rows are written by every triple,
// so all triples form one conflict group, which more than one thread runs split,
// under locks. Prints medians of one call per epoch (after the first, which plans)
// against the serial loop on plain vectors, and checks that the last call equals
// the serial run of its grant order (equivalent_order) bit for bit.
//
//   strata-split-bench [--entities E] [--triples N] [--dim D] [--epochs R] [--skewed 0|1] [--strata-threads=T]
//
// --skewed 1 (the default) draws relations as skewed as WordNet's (frequency ~ 1 /
// rank: a quarter of the triples write the first row), 0 uniformly.
//
// Compare thread counts by running it alternately with --strata-threads=1 and 2.
#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "strata/loop/parallel_for.hpp"

namespace {

using strata::Index;

constexpr std::int64_t kRelations = 26;

struct Model {
  int dim = 50;
  // Margin loss on ||h + r - t||^2 against a corrupted tail.
  void step(float* h, float* r, float* t, float* neg) const {
    float pos = 0, bad = 0;
    for (int k = 0; k < dim; ++k) {
      const float d = h[k] + r[k] - t[k], dn = h[k] + r[k] - neg[k];
      pos += d * d, bad += dn * dn;
    }
    if (pos + 1.0f <= bad) return;
    for (int k = 0; k < dim; ++k) {
      const float g = 0.01f * (h[k] + r[k] - t[k]), gn = 0.01f * (h[k] + r[k] - neg[k]);
      h[k] -= g - gn, r[k] -= g - gn, t[k] += g, neg[k] -= gn;
    }
  }
};

}  // namespace

int main(int argc, char** argv) try {
  using strata::bench::seconds_of;
  strata::Runtime rt(argc, argv);
  std::int64_t entities = 40943, triples = 141442;
  int epochs = 7;
  bool skewed = true;
  Model m;
  strata::bench::for_each_option(argc, argv, [&](const std::string& a, const char* value) {
    const std::int64_t v = strata::bench::number(a, value);
    if (a == "--entities") entities = v;
    else if (a == "--triples") triples = v;
    else if (a == "--dim") m.dim = static_cast<int>(v);
    else if (a == "--epochs") epochs = static_cast<int>(v);
    else if (a == "--skewed") skewed = v != 0;
    else throw strata::OptionError("unknown option " + a);
  });
  if (entities < 2 || triples < 1 || m.dim < 1 || epochs < 2)
    throw strata::OptionError("--entities must be at least 2, --triples and --dim positive, --epochs at least 2");
  // Relations as skewed as WordNet's (frequency ~ 1 / rank): a few hot rows.
  std::vector<std::int64_t> head, rel, tail;
  strata::RandomStream rs(31);
  std::vector<double> cumulative;
  double total = 0;
  for (std::int64_t r = 0; r < kRelations; ++r)
    cumulative.push_back(total += skewed ? 1.0 / static_cast<double>(r + 1) : 1.0);
  for (std::int64_t i = 0; i < triples; ++i) {
    head.push_back(static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(entities))));
    tail.push_back(static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(entities))));
    const double u = rs.uniform() * total;
    rel.push_back(std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
  }
  auto negative = [&](std::int64_t i, std::uint64_t epoch) {
    return static_cast<std::int64_t>(
        strata::CounterRng(epoch + 3).below(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(entities)));
  };
  auto space = strata::DistArray<float, 1>::zeros(rt, {triples});
  auto E = strata::DistArray<float, 2>::randn(rt, {entities, m.dim}, 0.1, 0.0, strata::Partition::range(0), 5);
  auto R = strata::DistArray<float, 2>::randn(rt, {kRelations, m.dim}, 0.1, 0.0, strata::Partition::range(0), 7);
  std::vector<float> e_twin = E.gather(), r_twin = R.gather();
  auto e_row = [&](std::vector<float>& v, std::int64_t k) { return &v[static_cast<std::size_t>(k * m.dim)]; };
  std::uint64_t epoch = 0;
  auto body = [&](const Index<1>& i, float) {
    const auto k = static_cast<std::size_t>(i[0]);
    m.step(E.row(head[k]).data(), R.row(rel[k]).data(), E.row(tail[k]).data(), E.row(negative(i[0], epoch)).data());
  };
  std::vector<double> twin, calls;
  strata::LoopReport report;
  std::vector<float> e_before, r_before;
  for (epoch = 0; epoch < static_cast<std::uint64_t>(epochs); ++epoch) {
    if (rt.rank() == 0)
      twin.push_back(seconds_of([&] {
        for (std::int64_t i = 0; i < triples; ++i) {
          const auto k = static_cast<std::size_t>(i);
          m.step(e_row(e_twin, head[k]), e_row(r_twin, rel[k]), e_row(e_twin, tail[k]),
                 e_row(e_twin, negative(i, epoch)));
        }
      }));
    if (epoch + 1 == static_cast<std::uint64_t>(epochs)) e_before = E.gather(), r_before = R.gather();
    calls.push_back(seconds_of([&] { report = strata::parallel_for(space, body); }));
  }
  // The last call against the serial run of its grant order.
  const auto order = strata::equivalent_order(space, report);
  const auto last = static_cast<std::uint64_t>(epochs - 1);
  for (const auto& i : order) {
    const auto k = static_cast<std::size_t>(i[0]);
    m.step(e_row(e_before, head[k]), e_row(r_before, rel[k]), e_row(e_before, tail[k]),
           e_row(e_before, negative(i[0], last)));
  }
  const bool same = E.gather() == e_before && R.gather() == r_before;
  if (rt.rank() == 0) {
    using strata::bench::median;
    const std::vector<double> later(calls.begin() + 1, calls.end());
    std::printf("TransE-shaped loop: %lld triples, %lld entities, %lld %s relations, dim %d; %d rank(s) x %d "
                "thread(s); %s\n",
                static_cast<long long>(triples), static_cast<long long>(entities),
                static_cast<long long>(kRelations), skewed ? "skewed" : "uniform", m.dim, rt.size(), rt.threads(),
                strata::bench::machine().c_str());
    std::printf("  plan: %s, %lld group(s), %lld split (%lld iterations), imbalance %.3f, plan %llu of the last call\n",
                strata::analysis::to_string(report.strategy).c_str(), static_cast<long long>(report.groups),
                static_cast<long long>(report.split_groups), static_cast<long long>(report.split_iterations),
                report.imbalance, static_cast<unsigned long long>(report.plan_id));
    std::printf("  serial twin (plain vectors)   %8.4f s a pass (median of %d)\n", median(twin), epochs);
    std::printf("  first call (plans)            %8.4f s\n", calls[0]);
    std::printf("  later calls                   %8.4f s a pass (median of %d; %.2fx the twin's speed)\n",
                median(later), epochs - 1, median(twin) / median(later));
    std::printf("  last call equals the serial run of its grant order: %s\n", same ? "yes" : "NO");
  }
  return same ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-split-bench: %s\n", e.what());
  return 1;
}
