// The MPI-free analysis layer of parallel_for: subscript fitting, dependence vectors,
// strategy choice and conflict groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "analysis/conflict_groups.hpp"
#include "strata/analysis/dependence.hpp"
#include "strata/analysis/strategy.hpp"
#include "strata/analysis/subscript.hpp"
#include "strata/error.hpp"

namespace strata::analysis {
namespace {

using S = Subscript;

// ---- subscript fitting --------------------------------------------------------

// Feeds f(i, j) for every point of an ni x nj iteration space.
template <class F>
Subscript fit2(std::int64_t ni, std::int64_t nj, F f) {
  SubscriptFitter fitter(2);
  for (std::int64_t i = 0; i < ni; ++i)
    for (std::int64_t j = 0; j < nj; ++j) {
      const std::int64_t p[2] = {i, j};
      fitter.observe(p, f(i, j));
    }
  return fitter.result();
}

TEST(SubscriptFitter, AffineWithOffsets) {
  EXPECT_EQ(fit2(4, 5, [](auto i, auto) { return i + 1; }), S::affine(0, 1));
  EXPECT_EQ(fit2(4, 5, [](auto, auto j) { return j - 2; }), S::affine(1, -2));
  EXPECT_EQ(fit2(4, 5, [](auto, auto j) { return j; }), S::affine(1, 0));
}

TEST(SubscriptFitter, ConstantWholeIrregularUnseen) {
  EXPECT_EQ(fit2(4, 5, [](auto, auto) { return 3; }), S::constant(3));
  EXPECT_EQ(fit2(4, 5, [](auto i, auto j) { return i * j; }), S::irregular());
  EXPECT_EQ(fit2(4, 5, [](auto i, auto j) { return i + j; }), S::irregular());
  SubscriptFitter whole(2);
  whole.observe_whole();
  EXPECT_EQ(whole.result(), S::whole());
  EXPECT_EQ(SubscriptFitter(2).result().kind, S::Kind::unseen);
}

TEST(SubscriptFitter, MixedWholeAndPointsIsWhole) {
  SubscriptFitter f(1);
  const std::int64_t p[1] = {4};
  f.observe(p, 4);
  f.observe_whole();
  f.observe(p, 4);
  EXPECT_EQ(f.result(), S::whole());
}

TEST(SubscriptFitter, AmbiguousFitPrefersAffine) {
  // One observation fits every dimension and a constant: the lowest dimension wins.
  SubscriptFitter one(2);
  const std::int64_t p[2] = {5, 2};
  one.observe(p, 7);
  EXPECT_EQ(one.result(), S::affine(0, 2));
  // i has extent 1: "0" and "i" both fit; j varies, so only i is affine.
  EXPECT_EQ(fit2(1, 6, [](auto, auto) { return 0; }), S::affine(0, 0));
  // A constant over a dimension that varies is a constant.
  EXPECT_EQ(fit2(3, 1, [](auto, auto) { return 9; }), S::affine(1, 9));
  EXPECT_EQ(fit2(3, 2, [](auto, auto) { return 9; }), S::constant(9));
}

TEST(SubscriptFitter, RejectsWrongIterationRank) {
  SubscriptFitter f(2);
  const std::int64_t p[1] = {0};
  EXPECT_THROW(f.observe(p, 0), ShapeError);
}

TEST(Subscript, Describe) {
  EXPECT_EQ(S::affine(0, 1).describe(), "i+1");
  EXPECT_EQ(S::affine(1, -2).describe(), "j-2");
  EXPECT_EQ(S::affine(1, 0).describe(), "j");
  const std::vector<std::string> names{"user", "item"};
  EXPECT_EQ(S::affine(1, 3).describe(names), "item+3");
  EXPECT_EQ(S::constant(3).describe(), "3");
  EXPECT_EQ(S::whole().describe(), ":");
  EXPECT_EQ(S::irregular().describe(), "?");
}

// ---- dependence vectors and strategies ----------------------------------------

Reference ref(int array, const char* name, const char* site, AccessKind kind,
              std::vector<Subscript> subs, bool buffered = false) {
  return {array, name, site, kind, std::move(subs), buffered};
}

std::vector<std::string> described(const std::vector<DependenceVector>& vs) {
  std::vector<std::string> out;
  for (const auto& v : vs) out.push_back(v.describe());
  std::sort(out.begin(), out.end());
  return out;
}

StrategyChoice plan(const std::vector<Reference>& refs, int dims, bool ordered,
                    std::optional<Strategy> forced = {}) {
  StrategyInput in;
  in.iter_dims = dims;
  in.ordered = ordered;
  in.irregular = has_irregular(refs, dims, ordered);
  in.vectors = dependence_vectors(refs, dims, ordered);
  in.forced = forced;
  return choose_strategy(in);
}

constexpr auto R = AccessKind::read;
constexpr auto W = AccessKind::write;
constexpr auto RW = AccessKind::read_write;

TEST(Dependence, IndependentIterationsRunOneD) {
  // for i: A[i] = B[i] * 2
  const std::vector<Reference> refs{ref(0, "A", "a.cpp:3", W, {S::affine(0, 0)}),
                                    ref(1, "B", "a.cpp:3", R, {S::affine(0, 0)})};
  for (bool ordered : {false, true}) {
    EXPECT_TRUE(dependence_vectors(refs, 1, ordered).empty());
    const auto c = plan(refs, 1, ordered);
    EXPECT_EQ(c.strategy, Strategy::one_d);
    EXPECT_EQ(c.space_dim, 0);
  }
}

TEST(Dependence, AccumulateAlongOneDimensionIsOneDOnI) {
  // for (i, j): A[i] += X[i][j]  -- a read site and a write site of A[i].
  const std::vector<Reference> refs{ref(0, "A", "a.cpp:5", R, {S::affine(0, 0)}),
                                    ref(0, "A", "a.cpp:5", W, {S::affine(0, 0)}),
                                    ref(1, "X", "a.cpp:5", R, {S::affine(0, 0), S::affine(1, 0)})};
  EXPECT_EQ(described(dependence_vectors(refs, 2, false)), (std::vector<std::string>{"(0, *)"}));
  const auto c = plan(refs, 2, false);
  EXPECT_EQ(c.strategy, Strategy::one_d);
  EXPECT_EQ(c.space_dim, 0);
}

TEST(Dependence, SingleReadWriteSiteDependsOnItself) {
  const std::vector<Reference> refs{ref(0, "W", "mf.cpp:9", RW, {S::affine(0, 0), S::whole()})};
  const auto vs = dependence_vectors(refs, 2, false);
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].describe(), "(0, *)");
  EXPECT_EQ(vs[0].ref_a, 0);
  EXPECT_EQ(vs[0].ref_b, 0);
  EXPECT_NE(vs[0].source.find("W (read-write at mf.cpp:9"), std::string::npos);
}

std::vector<Reference> sgd_mf() {
  // for (i, j) in R: w = W.row(i); h = H.row(j); update both.
  return {ref(0, "W", "mf.cpp:9", RW, {S::affine(0, 0), S::whole()}),
          ref(1, "H", "mf.cpp:10", RW, {S::affine(1, 0), S::whole()}),
          ref(2, "R", "mf.cpp:8", R, {S::affine(0, 0), S::affine(1, 0)})};
}

TEST(Dependence, SgdMatrixFactorisationIsTwoD) {
  EXPECT_EQ(described(dependence_vectors(sgd_mf(), 2, false)),
            (std::vector<std::string>{"(*, 0)", "(0, *)"}));
  for (bool ordered : {false, true}) {
    const auto c = plan(sgd_mf(), 2, ordered);
    EXPECT_EQ(c.strategy, Strategy::two_d);
    EXPECT_EQ(c.space_dim, 0);
    EXPECT_EQ(c.time_dim, 1);
    ASSERT_EQ(c.reasons.size(), 2u);
    EXPECT_EQ(c.reasons[0],
              "1D on i rejected: vector (*, 0) from H (read-write at mf.cpp:10, in two iterations) "
              "has * on i");
    EXPECT_EQ(
        c.reasons[1],
        "1D on j rejected: vector (0, *) from W (read-write at mf.cpp:9, in two iterations) has "
        "* on j");
  }
  // The cheaper dimension becomes the space dimension.
  StrategyInput in;
  in.iter_dims = 2;
  in.vectors = dependence_vectors(sgd_mf(), 2, false);
  in.traffic_per_dim = {100.0, 10.0};
  const auto c = choose_strategy(in);
  EXPECT_EQ(c.space_dim, 1);
  EXPECT_EQ(c.time_dim, 0);
}

TEST(Dependence, WriteWritePairsMatterOnlyWhenOrdered) {
  // for i: A[i] = 1; A[i+1] = 2
  const std::vector<Reference> refs{ref(0, "A", "a.cpp:3", W, {S::affine(0, 0)}),
                                    ref(0, "A", "a.cpp:4", W, {S::affine(0, 1)})};
  EXPECT_TRUE(dependence_vectors(refs, 1, false).empty());
  EXPECT_EQ(plan(refs, 1, false).strategy, Strategy::one_d);
  EXPECT_EQ(described(dependence_vectors(refs, 1, true)), (std::vector<std::string>{"(1)"}));
  EXPECT_EQ(plan(refs, 1, true).strategy, Strategy::serial);
}

TEST(Dependence, DifferentConstantsAndConflictingDistancesAreIndependent) {
  const std::vector<Reference> consts{ref(0, "A", "a.cpp:3", W, {S::constant(0)}),
                                      ref(0, "A", "a.cpp:4", R, {S::constant(1)})};
  EXPECT_TRUE(dependence_vectors(consts, 1, false).empty());
  // Ordered, the write site still conflicts with itself: every iteration writes A[0].
  EXPECT_EQ(described(dependence_vectors(consts, 1, true)), (std::vector<std::string>{"(*)"}));
  // A[i][i] written, A[i+1][i] read: d[i] would be both 1 and 0.
  const std::vector<Reference> diag{ref(0, "A", "a.cpp:3", W, {S::affine(0, 0), S::affine(0, 0)}),
                                    ref(0, "A", "a.cpp:4", R, {S::affine(0, 1), S::affine(0, 0)})};
  EXPECT_TRUE(dependence_vectors(diag, 1, true).empty());
  // Equal constants and affine-vs-constant leave "*".
  const std::vector<Reference> same{ref(0, "A", "a.cpp:3", W, {S::constant(2)}),
                                    ref(0, "A", "a.cpp:4", R, {S::affine(0, 0)})};
  EXPECT_EQ(described(dependence_vectors(same, 1, false)), (std::vector<std::string>{"(*)"}));
}

std::vector<Reference> stencil(bool with_diagonal) {
  // for (i, j) ordered: A[i][j] = A[i-1][j] + A[i][j-1] (+ A[i-1][j+1])
  std::vector<Reference> refs{ref(0, "A", "s.cpp:7:5", W, {S::affine(0, 0), S::affine(1, 0)}),
                              ref(0, "A", "s.cpp:7:15", R, {S::affine(0, -1), S::affine(1, 0)}),
                              ref(0, "A", "s.cpp:7:27", R, {S::affine(0, 0), S::affine(1, -1)})};
  if (with_diagonal)
    refs.push_back(ref(0, "A", "s.cpp:7:39", R, {S::affine(0, -1), S::affine(1, 1)}));
  return refs;
}

TEST(Dependence, OrderedStencilIsAWavefront) {
  EXPECT_EQ(described(dependence_vectors(stencil(false), 2, true)),
            (std::vector<std::string>{"(0, 1)", "(1, 0)"}));
  const auto c = plan(stencil(false), 2, true);
  EXPECT_EQ(c.strategy, Strategy::two_d);
  EXPECT_EQ(c.space_dim, 0);
  EXPECT_EQ(c.time_dim, 1);
  EXPECT_NE(c.reasons[0].find("1D on i rejected: vector (1, 0)"), std::string::npos)
      << c.reasons[0];
}

TEST(Dependence, DiagonalStencilNeedsSkewing) {
  const auto vs = dependence_vectors(stencil(true), 2, true);
  EXPECT_EQ(described(vs), (std::vector<std::string>{"(0, 1)", "(1, -1)", "(1, 0)"}));
  const auto c = plan(stencil(true), 2, true);
  ASSERT_EQ(c.strategy, Strategy::two_d_skewed);
  const auto T = c.skew;
  EXPECT_EQ(std::abs(T[0][0] * T[1][1] - T[0][1] * T[1][0]), 1);  // unimodular
  for (const auto& v : vs) {
    const std::int64_t s = v.d[static_cast<std::size_t>(c.space_dim)].value;
    const std::int64_t t = v.d[static_cast<std::size_t>(c.time_dim)].value;
    EXPECT_GE(T[0][0] * s + T[0][1] * t, 0) << v.describe();
    EXPECT_GE(T[1][0] * s + T[1][1] * t, 0) << v.describe();
  }
  EXPECT_EQ(T, (std::array<std::array<std::int64_t, 2>, 2>{{{1, 0}, {1, 1}}}));
  const bool named = std::any_of(c.reasons.begin(), c.reasons.end(), [](const std::string& r) {
    return r.find("ordered 2D on (i, j) rejected: vector (1, -1)") != std::string::npos;
  });
  EXPECT_TRUE(named);
}

TEST(Dependence, UnorderedLoopWithDiagonalDependenceUsesAWavefront) {
  // for (i, j): A[i][j] = f(A[i-1][j-1]): vector (1, 1), zero nowhere.
  const std::vector<Reference> refs{
      ref(0, "A", "a.cpp:3", W, {S::affine(0, 0), S::affine(1, 0)}),
      ref(0, "A", "a.cpp:3", R, {S::affine(0, -1), S::affine(1, -1)})};
  const auto c = plan(refs, 2, false);
  EXPECT_EQ(c.strategy, Strategy::two_d_skewed);
  EXPECT_EQ(c.skew, (std::array<std::array<std::int64_t, 2>, 2>{{{1, 0}, {0, 1}}}));
}

TEST(Dependence, LeadingStarLeavesLaterSignsUnknown) {
  // for (i, j): B[j] = B[j-1] + ...: real distances (x, +-1) for x > 0 and (0, 1).
  const std::vector<Reference> refs{ref(0, "B", "b.cpp:3", W, {S::affine(1, 0)}),
                                    ref(0, "B", "b.cpp:3", R, {S::affine(1, -1)})};
  const auto vs = dependence_vectors(refs, 2, true);
  ASSERT_EQ(described(vs),
            (std::vector<std::string>{"(*, 0)", "(*, 1)"}));  // (*, 0): the write with itself
  EXPECT_EQ(vs[1].describe(), "(*, 1)");
  EXPECT_EQ(vs[1].component_sign(0), DependenceVector::Sign::non_negative);
  EXPECT_EQ(vs[1].component_sign(1), DependenceVector::Sign::unknown);
  EXPECT_EQ(vs[0].component_sign(1), DependenceVector::Sign::zero);
  EXPECT_EQ(plan(refs, 2, true).strategy, Strategy::serial);
}

TEST(Dependence, IrregularAccessesUseGroups) {
  // for i: A[idx[i]] += x[i]
  const std::vector<Reference> refs{ref(0, "A", "g.cpp:4", RW, {S::irregular()}),
                                    ref(1, "x", "g.cpp:4", R, {S::affine(0, 0)})};
  EXPECT_TRUE(has_irregular(refs, 1, false));
  EXPECT_EQ(described(dependence_vectors(refs, 1, false)), (std::vector<std::string>{"(*)"}));
  const auto c = plan(refs, 1, false);
  EXPECT_EQ(c.strategy, Strategy::groups);
  // Irregular reads of an array nobody writes do not matter.
  const std::vector<Reference> reads{ref(0, "A", "g.cpp:4", R, {S::irregular()}),
                                     ref(1, "y", "g.cpp:5", W, {S::affine(0, 0)})};
  EXPECT_FALSE(has_irregular(reads, 1, false));
  EXPECT_EQ(plan(reads, 1, false).strategy, Strategy::one_d);
}

TEST(Dependence, BufferedWritesCreateNoDependences) {
  std::vector<Reference> refs = sgd_mf();
  for (auto& r : refs) r.buffered = r.kind == RW;
  EXPECT_TRUE(dependence_vectors(refs, 2, false).empty());
  StrategyInput in;
  in.iter_dims = 2;
  in.has_buffered_writes = true;
  const auto c = choose_strategy(in);
  EXPECT_EQ(c.strategy, Strategy::data_parallel);  // 1-D, and named for what it is
  EXPECT_EQ(c.space_dim, 0);
  EXPECT_TRUE(c.reasons.empty());
}

TEST(Strategy, ForcedIllegalStrategyNamesTheVector) {
  try {
    plan(sgd_mf(), 2, false, Strategy::one_d);
    FAIL() << "expected OptionError";
  } catch (const OptionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("one_d was forced"), std::string::npos) << what;
    EXPECT_NE(what.find("vector (0, *) from W"), std::string::npos) << what;
  }
  EXPECT_THROW(plan(sgd_mf(), 2, false, Strategy::data_parallel), OptionError);
  EXPECT_THROW(plan(stencil(true), 2, true, Strategy::two_d), OptionError);
  // Legal forced strategies are honoured, even weaker ones.
  EXPECT_EQ(plan(sgd_mf(), 2, false, Strategy::two_d).strategy, Strategy::two_d);
  EXPECT_EQ(plan(sgd_mf(), 2, false, Strategy::groups).strategy, Strategy::groups);
  EXPECT_EQ(plan(stencil(false), 2, true, Strategy::two_d_skewed).strategy, Strategy::two_d_skewed);
  std::vector<Reference> buffered = sgd_mf();
  for (auto& r : buffered) r.buffered = true;
  EXPECT_EQ(plan(buffered, 2, false, Strategy::data_parallel).strategy, Strategy::data_parallel);
}

TEST(Strategy, Names) {
  EXPECT_EQ(parse_strategy("auto"), std::nullopt);
  EXPECT_EQ(parse_strategy("two_d_skewed"), Strategy::two_d_skewed);
  EXPECT_EQ(parse_strategy("1d"), Strategy::one_d);
  EXPECT_EQ(to_string(Strategy::data_parallel), "data_parallel");
  EXPECT_THROW(parse_strategy("3d"), OptionError);
}

TEST(Strategy, RejectsMismatchedSizes) {
  StrategyInput in;
  in.iter_dims = 2;
  in.traffic_per_dim = {1.0};
  EXPECT_THROW(choose_strategy(in), ShapeError);
}

// ---- conflict groups ----------------------------------------------------------

TEST(ConflictGroups, HandMadeExample) {
  // 0 writes e1, 1 reads e1, 2 and 3 only read e5, 4 and 5 write e7, 5 reads e1;
  // 6 reads e9 before 7 writes it.
  const std::vector<ElementAccess> acc{{0, 1, true},  {1, 1, false}, {2, 5, false},
                                       {3, 5, false}, {4, 7, true},  {5, 7, true},
                                       {5, 1, false}, {6, 9, false}, {7, 9, true}};
  const Groups g = conflict_groups(8, acc);
  EXPECT_EQ(g.count, 4);
  EXPECT_EQ(g.group_of, (std::vector<std::int32_t>{0, 0, 1, 2, 0, 0, 3, 3}));
  EXPECT_EQ(g.group_size, (std::vector<std::int64_t>{4, 1, 1, 2}));
  EXPECT_THROW(conflict_groups(3, acc), ShapeError);
}

TEST(ConflictGroups, RandomMatchesBruteForce) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 150, elements = 300, count = 250;
    std::vector<ElementAccess> acc;
    for (int a = 0; a < count; ++a)
      acc.push_back({static_cast<std::int64_t>(rng() % n), rng() % elements * 0x100000001ull,
                     rng() % 4 == 0});
    const Groups g = conflict_groups(n, acc);
    // Brute force: conflict matrix, then components by flood fill.
    std::vector<std::vector<bool>> conflict(n, std::vector<bool>(n, false));
    for (const auto& a : acc)
      for (const auto& b : acc)
        if (a.element == b.element && (a.write || b.write))
          conflict[a.iteration][b.iteration] = true;
    std::vector<int> comp(n, -1);
    int comps = 0;
    for (int s = 0; s < n; ++s) {
      if (comp[s] >= 0) continue;
      std::vector<int> stack{s};
      comp[s] = comps;
      while (!stack.empty()) {
        const int x = stack.back();
        stack.pop_back();
        for (int y = 0; y < n; ++y)
          if (conflict[x][y] && comp[y] < 0) {
            comp[y] = comps;
            stack.push_back(y);
          }
      }
      ++comps;
    }
    ASSERT_EQ(g.count, comps);
    for (int x = 0; x < n; ++x)
      for (int y = 0; y < n; ++y) ASSERT_EQ(g.group_of[x] == g.group_of[y], comp[x] == comp[y]);
    // No written element is shared by two groups.
    std::map<std::uint64_t, std::set<std::int32_t>> groups_of_element;
    std::set<std::uint64_t> written;
    for (const auto& a : acc) {
      groups_of_element[a.element].insert(g.group_of[a.iteration]);
      if (a.write) written.insert(a.element);
    }
    for (std::uint64_t e : written) EXPECT_EQ(groups_of_element[e].size(), 1u);
    std::int64_t total = 0;
    for (auto s : g.group_size) total += s;
    EXPECT_EQ(total, n);
  }
}

TEST(ConflictGroups, ManyAccessesStayLinear) {
  // A smoke test of the hash table's growth: 1M accesses over 200k elements.
  std::mt19937_64 rng(7);
  const std::int64_t n = 500'000;
  std::vector<ElementAccess> acc;
  for (int a = 0; a < 1'000'000; ++a)
    acc.push_back({static_cast<std::int64_t>(rng() % n), rng() % 200'000, rng() % 64 == 0});
  const Groups g = conflict_groups(n, acc);
  std::int64_t total = 0;
  for (auto s : g.group_size) total += s;
  EXPECT_EQ(total, n);
  EXPECT_GT(g.count, 1);
}

TEST(PackGroups, LargestFirstOntoLeastLoaded) {
  const std::vector<std::int64_t> sizes{5, 4, 3, 3, 2, 1};
  const auto w = pack_groups(sizes, 2);
  EXPECT_EQ(w, (std::vector<std::int32_t>{0, 1, 1, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(imbalance(sizes, w, 2), 1.0);
  // Ties go to the lower worker id, in group order.
  const std::vector<std::int64_t> equal{2, 2, 2, 2};
  EXPECT_EQ(pack_groups(equal, 2), (std::vector<std::int32_t>{0, 1, 0, 1}));
  const std::vector<std::int32_t> all_on_zero{0, 0, 0, 0};
  EXPECT_DOUBLE_EQ(imbalance(equal, all_on_zero, 2), 2.0);
  EXPECT_THROW(pack_groups(equal, 0), OptionError);
  // A random skewed set stays close to balanced.
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> skewed;
  for (int g = 0; g < 1000; ++g) skewed.push_back(1 + static_cast<std::int64_t>(rng() % 100));
  EXPECT_LT(imbalance(skewed, pack_groups(skewed, 8), 8), 1.02);
}

}  // namespace
}  // namespace strata::analysis
