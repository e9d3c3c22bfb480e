// Matrix factorisation by SGD on Strata: serial.cpp with its vectors made
// DistArrays and its loops parallel_for. Kept line for line alike with serial.cpp.
#include "mf/strata.hpp"

#include <algorithm>

#include "strata/detail/free_now.hpp"

namespace strata::apps::mf {

namespace {

// This rank's share of the ratings (all it holds of a shared problem, else a slice of
// the whole); DistArray::sparse routes them to their owners. Sized at once: growing
// it entry by entry held up to twice its size while copying.
// With `release`, `all` (that vector) is released as the entries are made.
// This rank's share of `all`: all of it where the problem holds each rank's own
// ratings, else a contiguous share.
std::pair<std::int64_t, std::int64_t> share_of(Runtime& rt, const Problem& p, const std::vector<Rating>& all) {
  const auto n = static_cast<std::int64_t>(all.size());
  if (p.shared) return {0, n};
  return {n * rt.rank() / rt.size(), n * (rt.rank() + 1) / rt.size()};
}

// Users balanced by their training ratings (collective), as a plan with one thread a
// rank splits them: laying the loop out then moves neither R nor W. One rank: any.
Partition users_balanced(Runtime& rt, const Problem& p) {
  if (rt.size() == 1) return Partition::range(0);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p.users), 0);
  const auto [first, last] = share_of(rt, p, p.train);
  for (std::int64_t k = first; k < last; ++k)
    ++counts[static_cast<std::size_t>(p.train[static_cast<std::size_t>(k)].user)];
  rt.comm().allreduce(std::span(counts), ReduceOp::sum);
  return Partition::balanced(0, std::move(counts));
}

DistArray<float, 2> rating_array(Runtime& rt, const Problem& p, const std::vector<Rating>& all, const char* name,
                                 std::vector<Rating>* release, const Partition& partition) {
  const auto [first, last] = share_of(rt, p, all);
  std::vector<Entry<float, 2>> mine;
  mine.reserve(static_cast<std::size_t>(last - first));
  // Ratings this program owns are handed back as they are read: the entries (twice
  // their size) and the ratings are not both held whole.
  auto make_entries = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to; ++k) mine.push_back({Index<2>{all[k].user, all[k].item}, all[k].value});
  };
  const auto [from, to] = std::pair(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
  if (release) {
    strata::detail::read_then_drop(all.data(), from, to, make_entries);
    std::vector<Rating>().swap(*release);
  } else {
    make_entries(from, to);
  }
  auto a = DistArray<float, 2>::sparse(rt, {p.users, p.items}, std::move(mine), Duplicates::error, partition);
  a.set_name(name);
  return a;
}

// Options::state_per_row values per row, each Options::state_start (none: an empty array).
DistArray<float, 2> step_state(Runtime& rt, std::int64_t rows, const Options& o, const char* name,
                               const Partition& partition) {
  const int S = o.state_per_row();
  auto g = DistArray<float, 2>::fill(rt, {S > 0 ? rows : 0, std::max(S, 1)}, o.state_start(),
                                     S > 0 ? partition : Partition::range(0));
  g.set_name(name);
  return g;
}

DistArray<float, 2> initial_factors(Runtime& rt, std::int64_t rows, const Options& o, std::uint64_t seed,
                                    const char* name, const Partition& partition) {
  const int K = o.rank;
  auto f = DistArray<float, 2>::generate(
      rt, {rows, K}, [&](const Index<2>& i) { return initial_factor(seed, i[0], K, static_cast<int>(i[1])); },
      partition);
  f.set_name(name);
  return f;
}

}  // namespace

StrataMf::StrataMf(Runtime& rt, const Problem& problem, const Options& options, std::optional<analysis::Strategy> plan)
    : StrataMf(rt, problem, nullptr, options, plan) {}

StrataMf::StrataMf(Runtime& rt, Problem& problem, const Options& options, std::optional<analysis::Strategy> plan,
                   ReleaseRatings)
    : StrataMf(rt, problem, &problem, options, plan) {}

StrataMf::StrataMf(Runtime& rt, const Problem& problem, Problem* releasing, const Options& options,
                   std::optional<analysis::Strategy> plan)
    : rt_(rt),
      o_(options),
      data_parallel_(plan == analysis::Strategy::data_parallel),
      by_users_(users_balanced(rt, problem)),
      R_(rating_array(rt, problem, problem.train, "R", releasing ? &releasing->train : nullptr, by_users_)),
      T_(rating_array(rt, problem, problem.test, "R_test", releasing ? &releasing->test : nullptr,
                      Partition::range(0))),
      W_(initial_factors(rt, problem.users, options, user_seed(options.seed), "W", by_users_)),
      H_(initial_factors(rt, problem.items, options, item_seed(options.seed), "H", Partition::range(0))),
      GW_(step_state(rt, problem.users, options, "GW", by_users_)),
      GH_(step_state(rt, problem.items, options, "GH", Partition::range(0))),
      pass_loss_(rt) {
  // --order shuffled: each block's ratings in a seeded random order, closer to the
  // serial program's shuffled data; key order keeps rows in cache (faster).
  if (o_.shuffled) loop_.shuffle_seed = mix64(o_.seed ^ 0x6f72646572ULL);
  loop_.rounds = o_.rounds;
  loop_.slices_per_worker = o_.slices;
  if (!data_parallel_) loop_.strategy = plan;
  else {
    const auto bsp = strata::bsp().every(o_.clock_every);
    hbuf_ = std::make_unique<Buffer<float, 2>>(H_, apply::sum(), bsp);
    if (o_.state_per_row() > 0) ghbuf_ = std::make_unique<Buffer<float, 2>>(GH_, apply::sum(), bsp);
  }
}

double StrataMf::pass() {
  o_.warm_up = o_.warms_up() && passes_++ == 0;
  if (data_parallel_) pass_data_parallel();
  else {
    const int K = o_.rank;
    const bool state = o_.state_per_row() > 0;
    report_ = run_or_explain(explaining_, R_, [&](const Index<2>& ui, float r) {
      float* w = W_.row(ui[0]).data();
      float* h = H_.row(ui[1]).data();
      const float z = state ? step(w, h, GW_.row(ui[0]).data(), GH_.row(ui[1]).data(), K, r, o_)
                            : step(w, h, nullptr, nullptr, K, r, o_);
      pass_loss_ += loss_value(o_.loss, r, z);
    }, loop_);
  }
  return pass_loss_.take();
}

// The parameter-server variant: an item's factors (and step state) are read from
// the rank's cache, updated on a copy, and the change goes through a sum Buffer;
// user factors are written directly (the plan partitions users). Up to the clock
// boundary, other workers' changes to an item are invisible: the gap this opens
// against serial SGD is what dependence-aware plans avoid.
void StrataMf::pass_data_parallel() {
  const int K = o_.rank, S = o_.state_per_row();
  report_ = run_or_explain(explaining_, R_, [&](const Index<2>& ui, float r) {
    float h[kMaxRank], gh[kMaxRank];
    const auto hr = H_.read_row(ui[1]);
    std::copy(hr.begin(), hr.end(), h);
    float* w = W_.row(ui[0]).data();
    if (S > 0) {
      const auto ghr = GH_.read_row(ui[1]);
      std::copy(ghr.begin(), ghr.end(), gh);
      pass_loss_ += loss_value(o_.loss, r, step(w, h, GW_.row(ui[0]).data(), gh, K, r, o_));
      for (int k = 0; k < S; ++k) ghbuf_->add({ui[1], k}, gh[k] - ghr[static_cast<std::size_t>(k)]);
    } else {
      pass_loss_ += loss_value(o_.loss, r, step(w, h, nullptr, nullptr, K, r, o_));
    }
    for (int k = 0; k < K; ++k) hbuf_->add({ui[1], k}, h[k] - hr[static_cast<std::size_t>(k)]);
  }, loop_);
}

Fit StrataMf::fit(DistArray<float, 2>& ratings, std::source_location where) {
  const int K = o_.rank;
  Accumulator<double> objective(rt_), squared(rt_), absolute(rt_), logloss(rt_), correct(rt_);
  run_or_explain(explaining_, ratings, [&](const Index<2>& ui, float r) {
    Fit one;
    measure(W_.read_row(ui[0]).data(), H_.read_row(ui[1]).data(), K, r, o_, one);
    objective += one.objective;
    squared += one.squared;
    absolute += one.absolute;
    logloss += one.logloss;
    correct += static_cast<double>(one.correct);
  }, LoopOptions{}, where);
  Fit f;
  f.objective = objective.take();
  f.squared = squared.take();
  f.absolute = absolute.take();
  f.logloss = logloss.take();
  f.correct = static_cast<std::int64_t>(correct.take());
  f.count = ratings.nnz();
  return f;
}

void StrataMf::explain() {
  explaining_ = true;
  pass();
  fit_train();
  explaining_ = false;
}

// From R's own entries, so the problem's ratings need not outlive the model.
std::vector<Rating> StrataMf::equivalent_order() const {
  auto as_rating = [](const Index<2>& ui, float value) {
    return Rating{static_cast<std::int32_t>(ui[0]), static_cast<std::int32_t>(ui[1]), value};
  };
  std::vector<Rating> by_pair;
  for (const auto& e : R_.gather_entries()) by_pair.push_back(as_rating(e.index, e.value));
  auto less = [](const Rating& a, const Rating& b) { return a.user != b.user ? a.user < b.user : a.item < b.item; };
  std::sort(by_pair.begin(), by_pair.end(), less);
  std::vector<Rating> order;
  for (const auto& ui : strata::equivalent_order(R_, report_))
    order.push_back(*std::lower_bound(by_pair.begin(), by_pair.end(), as_rating(ui, 0), less));
  return order;
}

}  // namespace strata::apps::mf
