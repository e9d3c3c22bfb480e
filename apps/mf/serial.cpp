// Matrix factorisation by SGD, serial. strata.cpp is this file moved to Strata;
// the two are kept line for line alike so their diff shows what the move costs.
#include "mf/serial.hpp"

namespace strata::apps::mf {

namespace {

std::vector<float> initial_factors(std::int64_t rows, int K, std::uint64_t seed) {
  std::vector<float> f(static_cast<std::size_t>(rows * K));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k) f[static_cast<std::size_t>(r * K + k)] = initial_factor(seed, r, K, k);
  return f;
}

}  // namespace

SerialMf::SerialMf(const Problem& problem, const Options& options)
    : p_(problem),
      o_(options),
      W_(initial_factors(problem.users, options.rank, user_seed(options.seed))),
      H_(initial_factors(problem.items, options.rank, item_seed(options.seed))),
      GW_(static_cast<std::size_t>(problem.users * options.state_per_row()), options.state_start()),
      GH_(static_cast<std::size_t>(problem.items * options.state_per_row()), options.state_start()) {}

double SerialMf::pass() { return pass(p_.train); }

double SerialMf::pass(const std::vector<Rating>& order) {
  o_.warm_up = o_.warms_up() && passes_++ == 0;
  const int K = o_.rank, S = o_.state_per_row();
  double loss = 0;
  for (const Rating& x : order) {
    float* w = &W_[static_cast<std::size_t>(x.user * K)];
    float* h = &H_[static_cast<std::size_t>(x.item * K)];
    loss += loss_value(o_.loss, x.value, step(w, h, GW_.data() + x.user * S, GH_.data() + x.item * S, K, x.value, o_));
  }
  return loss;
}

Fit SerialMf::fit(const std::vector<Rating>& ratings) const {
  const int K = o_.rank;
  Fit f;
  for (const Rating& x : ratings) {
    const float* w = &W_[static_cast<std::size_t>(x.user * K)];
    const float* h = &H_[static_cast<std::size_t>(x.item * K)];
    measure(w, h, K, x.value, o_, f);
  }
  f.count = static_cast<std::int64_t>(ratings.size());
  return f;
}

}  // namespace strata::apps::mf
