// A loop whose one conflict group is split over the threads (docs/loops.md, "Split
// groups"), for the record and replay test (tests/cli/split_replay_test.sh). Each
// call moves a TransE-shaped model: a triple writes its relation's row of a small
// table, its head and tail rows and a negative drawn from the epoch, so every
// iteration conflicts with others and the order of a run depends on timing. It writes
// the final rows to OUT (rank 0), and prints the calls whose groups were split.
//   split_probe OUT [--strata-... runtime options]
#include <cstdio>
#include <string>
#include <vector>

#include "strata/loop/parallel_for.hpp"
#include "strata/random.hpp"
#include "strata/runtime.hpp"

int main(int argc, char** argv) {
  using namespace strata;
  Runtime rt(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: split_probe OUT\n");
    return 2;
  }
  constexpr std::int64_t entities = 4000, relations = 5, triples = 40000;
  constexpr int dim = 6;
  std::vector<std::int64_t> head, rel, tail;
  RandomStream rs(7);
  for (std::int64_t i = 0; i < triples; ++i) {
    head.push_back(i < entities ? i : static_cast<std::int64_t>(rs.below(entities)));
    tail.push_back(static_cast<std::int64_t>(rs.below(entities)));
    rel.push_back(static_cast<std::int64_t>(rs.below(relations)));
  }
  auto space = DistArray<float, 1>::zeros(rt, {triples});
  auto E = DistArray<float, 2>::randn(rt, {entities, dim}, 0.3, 0.0, Partition::range(0), 3);
  auto R = DistArray<float, 2>::randn(rt, {relations, dim}, 0.3, 0.0, Partition::range(0), 4);
  E.set_name("E");
  R.set_name("R");
  std::uint64_t epoch = 0;
  int split_calls = 0;
  for (epoch = 0; epoch < 4; ++epoch) {
    const LoopReport report = parallel_for(space, [&](const Index<1>& i, float) {
      const auto k = static_cast<std::size_t>(i[0]);
      float* h = E.row(head[k]).data();
      float* r = R.row(rel[k]).data();
      float* t = E.row(tail[k]).data();
      float* n = E.row(static_cast<std::int64_t>(CounterRng(epoch).below(k, entities))).data();
      for (int d = 0; d < dim; ++d) {
        const float g = 0.05f * (h[d] + r[d] - t[d]), gn = 0.05f * (h[d] + r[d] - n[d]);
        h[d] -= g - gn, r[d] -= g - gn, t[d] += g, n[d] -= gn;
      }
    });
    split_calls += report.split_groups > 0 ? 1 : 0;
  }
  const std::vector<float> e = E.gather(), r = R.gather();
  if (rt.rank() == 0) {
    std::FILE* f = std::fopen(argv[1], "wb");
    if (!f || std::fwrite(e.data(), sizeof(float), e.size(), f) != e.size() ||
        std::fwrite(r.data(), sizeof(float), r.size(), f) != r.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", argv[1]);
      return 1;
    }
    std::printf("split calls: %d\n", split_calls);
  }
  return 0;
}
