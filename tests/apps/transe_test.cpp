// The transe app: a data-parallel plan over batches of triples whose entity and
// relation rows are written through Buffers; it equals the serial program bit for bit
// on one worker under Hybrid and tracks it on more; the planted grid is learned; the
// ranks are those of a brute-force count; the triple loader's held-out lines and
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "strata/error.hpp"
#include "test_runtime.hpp"
#include "transe/serial.hpp"
#include "transe/strata.hpp"

namespace strata::apps::transe {
namespace {

using strata::testing::rt;

bool one_worker() { return rt().size() * rt().threads() == 1; }

Graph small_graph() {
  SyntheticSpec s;
  s.entities = 1000;
  s.relations = 8;
  s.clusters = 100;
  s.triples = 12000;
  Graph g = generate(s, 0.05, 3);
  trim_test(g, 100);
  return g;
}

TEST(TranseApp, StepsMatchTheSerialProgram) {
  const Graph g = small_graph();
  for (const int norm : {1, 2}) {
    Options o;
    o.dim = 16;
    o.norm = norm;
    o.lr = 0.05f;
    o.batch = 25;
    o.clock_every = 1;  // 456 batches: a clock every batch of a worker across ranks
    StrataTranse parallel(rt(), g, o);
    SerialTranse serial(g, o);
    Fit a_train, b_train;
    for (int pass = 0; pass < 8; ++pass) {
      a_train = parallel.pass();
      b_train = serial.pass();
    }
    EXPECT_EQ(parallel.report().strategy, analysis::Strategy::data_parallel);
    const auto e = parallel.entities().gather(), r = parallel.relations().gather();
    const Ranks a = parallel.rank_test(), b = serial.rank_test();
    EXPECT_EQ(a.count, 2 * static_cast<std::int64_t>(g.test.size()));
    EXPECT_EQ(a.count, b.count);
    if (one_worker()) {
      ASSERT_EQ(e, serial.entities()) << "L" << norm;
      ASSERT_EQ(r, serial.relations()) << "L" << norm;
      EXPECT_EQ(a_train.loss, b_train.loss);
      EXPECT_EQ(a_train.violated, b_train.violated);
      EXPECT_EQ(a.rank_sum, b.rank_sum);
      EXPECT_EQ(a.raw_hits10, b.raw_hits10);
    } else {
      // Up to 8 workers, lock-free inside a rank and bulk-synchronous across ranks (a
      // clock every batch of a worker), so the result depends on the threads' timing.
      // Training loss against the serial program's, L1: 1.02-1.38x over 5 runs at 4
      // ranks x 2 threads (2026-11-26); 0.95-1.49x over 12 runs at 2 and 4 ranks x 2
      // threads, and once 1.504x in CI at 2 x 2 (2026-11-28, a sitting where moving
      // rows between the cores was slow). L2: within 7 %. Held-out mean rank 0.9-1.4x
      // (L1) and up to 1.77x (L2, 100 triples).
      EXPECT_LT(a_train.mean(), 1.8 * b_train.mean()) << "L" << norm;
      EXPECT_LT(a.mean_rank(), 2.0 * b.mean_rank()) << "L" << norm;
    }
    // Learned something: random rows rank a held-out entity about halfway (500).
    EXPECT_LT(b.mean_rank(), 300) << "L" << norm;
    EXPECT_LT(a.mean_rank(), 400) << "L" << norm;  // 4 ranks x 2 threads: up to 266 measured (L1)
  }
}

// Ranks by a count over all entities: tails of (h, r, ?) and heads of (?, r, t) closer
// than the truth, ties half, other known triples left out for the filtered rank.
TEST(TranseModel, RanksCountCloserEntities) {
  Graph g;
  g.entities = 5;
  g.relations = 1;
  g.train = {{0, 0, 1}, {0, 0, 2}};
  g.test = {{0, 0, 3}};
  g.remember();
  Options o;
  o.dim = 1;
  o.norm = 1;
  // Entities on a line: 0 at 0, 1 at 1, 2 at 2, 3 at 2, 4 at 5; the relation +2.
  const std::vector<float> e = {0, 1, 2, 2, 5};
  const float r = 2;
  float q = 0;
  const Ranks k =
      rank_triple(g, g.test[0], &r, o, &q, [&](std::int32_t id) { return &e[static_cast<std::size_t>(id)]; });
  ASSERT_EQ(k.count, 2);
  // Tail: q = 2; distances 2, 1, 0, (truth 0), 3: entity 2 ties (half); raw rank 1.5,
  // filtered 1 ((0, 0, 2) is a known triple). Head: q = 3 - 2 = 0... truth 0 is at
  // distance |e0 - q| with q = t - r = 0: entity 0 itself; nothing is closer: rank 1.
  EXPECT_DOUBLE_EQ(k.raw_rank_sum, 1.5 + 1);
  EXPECT_DOUBLE_EQ(k.rank_sum, 1 + 1);
  EXPECT_DOUBLE_EQ(k.hits10, 2);
}

TEST(TranseModel, CorruptionNeverRepeatsTheEntityItReplaces) {
  const Triple t{3, 0, 7};
  int heads = 0;
  for (std::int64_t i = 0; i < 2000; ++i) {
    const Corruption c = corrupt(9, 1, i, t, 8);
    EXPECT_NE(c.entity, c.head ? t.head : t.tail);
    EXPECT_GE(c.entity, 0);
    EXPECT_LT(c.entity, 8);
    heads += c.head;
  }
  EXPECT_NEAR(heads, 1000, 120);  // a fair coin
}

TEST(TranseModel, ProjectionKeepsEntitiesInTheUnitBall) {
  const float row[3] = {0.6f, 0.0f, 0.0f}, step[3] = {0.6f, 0.8f, 0.0f};
  float delta[3];
  projected_delta(row, step, delta, 3);
  const float x = row[0] + delta[0], y = row[1] + delta[1];
  EXPECT_NEAR(std::sqrt(x * x + y * y), 1.0, 1e-6);
  const float small[3] = {0.1f, 0.1f, 0.0f};
  projected_delta(row, small, delta, 3);
  EXPECT_FLOAT_EQ(delta[0], 0.1f);  // inside the ball: the step as it is
}

TEST(TranseLoader, ReadsTriplesAndHoldsOutKnownEntitiesOnly) {
  std::string text = "# a comment\n\n";
  for (int k = 0; k < 300; ++k) text += "e" + std::to_string(k % 40) + " r" + std::to_string(k % 3) + " e" +
                                        std::to_string((k * 7) % 40) + "\n";
  text += "lonely r0 e1\n";
  const Graph g = graph_from_text("t.txt", text, 0.2, 5);
  EXPECT_EQ(g.relations, 3);
  EXPECT_GT(g.test.size(), 30u);
  EXPECT_LT(g.test.size(), 100u);
  EXPECT_EQ(g.train.size() + g.test.size() + (g.source.find("left out") != std::string::npos ? 1 : 0), 301u);
  for (const Triple& t : g.test) {
    EXPECT_LT(t.head, g.entities);
    EXPECT_LT(t.tail, g.entities);
  }
  for (const Triple& t : g.test) EXPECT_TRUE(g.knows(t.head, t.relation, t.tail));
  try {
    graph_from_text("bad.txt", "a r b\na r\n", 0.0, 1);
    FAIL() << "a line of two fields was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.line(), 2);
  }
  EXPECT_THROW(graph_from_text("four.txt", "a r b c\n", 0.0, 1), ParseError);
  EXPECT_THROW(graph_from_text("empty.txt", "# nothing\n", 0.0, 1), ParseError);
  EXPECT_THROW(load_triples("/nonexistent/triples.txt", 0.1, 1), IoError);
}

TEST(TranseLoader, TestFileKeepsKnownNames) {
  strata::testing::TempDir dir("transe-load");
  const std::string path = dir.file("test.txt");
  if (rt().rank() == 0) std::ofstream(path) << "a r b\nz r a\nb q a\nb r a\n";
  rt().comm().barrier();
  Graph g = graph_from_text("t.txt", "a r b\nb r c\n", 0.0, 1);
  attach_test(g, path);
  ASSERT_EQ(g.test.size(), 2u);  // z is no entity, q no relation
  EXPECT_EQ(g.entity_names[static_cast<std::size_t>(g.test[1].head)], "b");
  EXPECT_TRUE(g.knows(g.test[1].head, g.test[1].relation, g.test[1].tail));
  EXPECT_FALSE(g.knows(g.test[1].tail, g.test[1].relation, g.test[1].head + 5));
}

}  // namespace
}  // namespace strata::apps::transe
