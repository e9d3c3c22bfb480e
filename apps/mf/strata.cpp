// Matrix factorisation by SGD on Strata: serial.cpp with its vectors made
// DistArrays and its loops parallel_for. Kept line for line alike with serial.cpp.
#include "mf/strata.hpp"

#include <algorithm>

namespace strata::apps::mf {

namespace {

// This rank's share of the ratings; DistArray::sparse routes them to their owners.
DistArray<float, 2> rating_array(Runtime& rt, const Problem& p, const std::vector<Rating>& all, const char* name) {
  std::vector<Entry<float, 2>> mine;
  const auto n = static_cast<std::int64_t>(all.size());
  for (std::int64_t k = n * rt.rank() / rt.size(); k < n * (rt.rank() + 1) / rt.size(); ++k) {
    const Rating& x = all[static_cast<std::size_t>(k)];
    mine.push_back({Index<2>{x.user, x.item}, x.value});
  }
  auto a = DistArray<float, 2>::sparse(rt, {p.users, p.items}, std::move(mine));
  a.set_name(name);
  return a;
}

DistArray<float, 2> initial_factors(Runtime& rt, std::int64_t rows, int K, std::uint64_t seed, const char* name) {
  auto f = DistArray<float, 2>::randn(rt, {rows, K}, 0.1, 0.0, Partition::range(0), seed);
  f.set_name(name);
  return f;
}

}  // namespace

StrataMf::StrataMf(Runtime& rt, const Problem& problem, const Options& options, std::optional<analysis::Strategy> plan)
    : rt_(rt),
      p_(problem),
      o_(options),
      data_parallel_(plan == analysis::Strategy::data_parallel),
      R_(rating_array(rt, problem, problem.train, "R")),
      T_(rating_array(rt, problem, problem.test, "R_test")),
      W_(initial_factors(rt, problem.users, options.rank, user_seed(options.seed), "W")),
      H_(initial_factors(rt, problem.items, options.rank, item_seed(options.seed), "H")),
      GW_(DistArray<float, 2>::zeros(rt, {options.adagrad ? problem.users : 0, options.rank})),
      GH_(DistArray<float, 2>::zeros(rt, {options.adagrad ? problem.items : 0, options.rank})) {
  GW_.set_name("GW");
  GH_.set_name("GH");
  // --order shuffled: each block's ratings in a seeded random order, closer to the
  // serial program's shuffled data; key order keeps rows in cache (faster).
  if (o_.shuffled) loop_.shuffle_seed = mix64(o_.seed ^ 0x6f72646572ULL);
  loop_.rounds = o_.rounds;
  loop_.slices_per_worker = o_.slices;
  if (!data_parallel_) loop_.strategy = plan;
  else {
    const auto bsp = strata::bsp().every(o_.clock_every);
    hbuf_ = std::make_unique<Buffer<float, 2>>(H_, apply::sum(), bsp);
    if (o_.adagrad) ghbuf_ = std::make_unique<Buffer<float, 2>>(GH_, apply::sum(), bsp);
  }
}

void StrataMf::pass() {
  if (data_parallel_) return pass_data_parallel();
  const int K = o_.rank;
  report_ = run_or_explain(explaining_, R_, [&](const Index<2>& ui, float r) {
    float* w = W_.row(ui[0]).data();
    float* h = H_.row(ui[1]).data();
    if (o_.adagrad) adagrad_step(w, h, GW_.row(ui[0]).data(), GH_.row(ui[1]).data(), K, r, o_);
    else plain_step(w, h, K, r, o_);
  }, loop_);
}

// The parameter-server variant: an item's factors (and AdaGrad sums) are read from
// the rank's cache, updated on a copy, and the change goes through a sum Buffer;
// user factors are written directly (the plan partitions users). Up to the clock
// boundary, other workers' changes to an item are invisible: the gap this opens
// against serial SGD is what dependence-aware plans avoid.
void StrataMf::pass_data_parallel() {
  const int K = o_.rank;
  report_ = run_or_explain(explaining_, R_, [&](const Index<2>& ui, float r) {
    float h[kMaxRank], gh[kMaxRank];
    const auto hr = H_.read_row(ui[1]);
    std::copy(hr.begin(), hr.end(), h);
    float* w = W_.row(ui[0]).data();
    if (o_.adagrad) {
      const auto ghr = GH_.read_row(ui[1]);
      std::copy(ghr.begin(), ghr.end(), gh);
      adagrad_step(w, h, GW_.row(ui[0]).data(), gh, K, r, o_);
      for (int k = 0; k < K; ++k) ghbuf_->add({ui[1], k}, gh[k] - ghr[static_cast<std::size_t>(k)]);
    } else {
      plain_step(w, h, K, r, o_);
    }
    for (int k = 0; k < K; ++k) hbuf_->add({ui[1], k}, h[k] - hr[static_cast<std::size_t>(k)]);
  }, loop_);
}

Fit StrataMf::fit(DistArray<float, 2>& ratings) {
  const int K = o_.rank;
  Accumulator<double> objective(rt_), squared(rt_);
  run_or_explain(explaining_, ratings, [&](const Index<2>& ui, float r) {
    double o = 0, s = 0;
    measure(W_.read_row(ui[0]).data(), H_.read_row(ui[1]).data(), K, r, o_.reg, o, s);
    objective += o;
    squared += s;
  }, LoopOptions{});
  Fit f;
  f.objective = objective.take();
  f.squared_error = squared.take();
  f.count = ratings.nnz();
  return f;
}

void StrataMf::explain() {
  explaining_ = true;
  pass();
  fit_train();
  explaining_ = false;
}

std::vector<Rating> StrataMf::equivalent_order() const {
  std::vector<Rating> by_pair = p_.train;
  auto less = [](const Rating& a, const Rating& b) { return a.user != b.user ? a.user < b.user : a.item < b.item; };
  std::sort(by_pair.begin(), by_pair.end(), less);
  std::vector<Rating> order;
  for (const auto& ui : strata::equivalent_order(R_, report_))
    order.push_back(*std::lower_bound(by_pair.begin(), by_pair.end(), Rating{ui[0], ui[1], 0}, less));
  return order;
}

}  // namespace strata::apps::mf
