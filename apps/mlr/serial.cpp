// Multinomial logistic regression by SGD, serial. strata.cpp is this file moved to
// Strata; the two are kept line for line alike so their diff shows what it costs.
#include "mlr/serial.hpp"

namespace strata::apps::mlr {

SerialMlr::SerialMlr(const Problem& problem, const Options& options)
    : p_(problem), o_(options), k_(static_cast<std::size_t>(problem.classes)),
      bias_(static_cast<std::size_t>(problem.features)),
      w_(static_cast<std::size_t>(model_rows(problem.features, options)) * k_, 0.0f) {
  if (o_.step == Step::adagrad) g2_.assign(w_.size() / k_, 0.0);
}

void SerialMlr::scores(const Sample& s, float* z) const {
  std::fill(z, z + k_, 0.0f);
  if (o_.bias) add_scaled(z, row(bias_), 1.0f);
  for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
    add_scaled(z, row(static_cast<std::size_t>(p_.feature[static_cast<std::size_t>(k)])),
               p_.value[static_cast<std::size_t>(k)]);
}

void SerialMlr::step(std::size_t f, float x, const float* g, double g2_unit) {
  float* delta = scratch(k_, 1);
  float eta = o_.lr;
  if (o_.step == Step::adagrad) {
    const double g2 = static_cast<double>(x) * x * g2_unit;
    eta = adagrad_rate(g2_[f] + g2, o_);
    g2_[f] += g2;
  }
  row_delta(delta, g, row(f), x, eta, o_);
  float* w = w_.data() + f * k_;
  for (std::size_t c = 0; c < k_; ++c) w[c] += delta[c];
}

Fit SerialMlr::pass() {
  Fit fit;
  for (const Sample& s : p_.train) {
    float* z = scratch(k_, 0);
    scores(s, z);
    const float p = softmax(z, k_, s.label);
    measure(p, predicted(z, k_) == s.label, fit.log_loss, fit.correct);
    z[s.label] -= 1.0f;  // the scores' gradient: p - onehot(label)
    const double g2 = o_.step == Step::adagrad ? mean_square(z, k_) : 0.0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      step(static_cast<std::size_t>(p_.feature[static_cast<std::size_t>(k)]), p_.value[static_cast<std::size_t>(k)],
           z, g2);
    if (o_.bias) step(bias_, 1.0f, z, g2);
  }
  fit.count = static_cast<std::int64_t>(p_.train.size());
  return fit;
}

Fit SerialMlr::fit(const std::vector<Sample>& samples) const {
  Fit f;
  float* z = scratch(k_, 0);
  for (const Sample& s : samples) {
    scores(s, z);
    const float p = softmax(z, k_, s.label);
    measure(p, predicted(z, k_) == s.label, f.log_loss, f.correct);
  }
  f.count = static_cast<std::int64_t>(samples.size());
  return f;
}

}  // namespace strata::apps::mlr
