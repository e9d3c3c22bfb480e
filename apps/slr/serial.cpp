// Sparse logistic regression by SGD, serial. strata.cpp is this file moved to
// Strata; the two are kept line for line alike so their diff shows what it costs.
#include "slr/serial.hpp"

namespace strata::apps::slr {

SerialSlr::SerialSlr(const Problem& problem, const Options& options)
    : p_(problem), o_(options), w_(static_cast<std::size_t>(problem.features), 0.0f), state_(w_.size()) {}

void SerialSlr::pass() {
  const apply::AdaGrad adagrad{o_.lr};
  const std::int32_t* feature = p_.feature.data();
  const float* value = p_.value.data();
  for (const Sample& s : p_.train) {
    float z = 0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) z += w_[static_cast<std::size_t>(feature[k])] * value[k];
    const float g = sigmoid(z) - s.label;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) {
      const auto f = static_cast<std::size_t>(feature[k]);
      if (o_.adarevision) adagrad(w_[f], state_[f], g * value[k]);
      else w_[f] += -o_.lr * g * value[k];
    }
  }
}

Fit SerialSlr::fit(const std::vector<Sample>& samples) const {
  Fit f;
  for (const Sample& s : samples) {
    float z = 0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      z += w_[static_cast<std::size_t>(p_.feature[static_cast<std::size_t>(k)])] * p_.value[static_cast<std::size_t>(k)];
    measure(sigmoid(z), s.label, f.log_loss, f.correct);
  }
  f.count = static_cast<std::int64_t>(samples.size());
  return f;
}

}  // namespace strata::apps::slr
