// Sparse logistic regression by SGD, serial. strata.cpp is this file moved to
// Strata; the two are kept line for line alike so their diff shows what it costs.
#include "slr/serial.hpp"

namespace strata::apps::slr {

SerialSlr::SerialSlr(const Problem& problem, const Options& options)
    : p_(problem), o_(options), bias_(static_cast<std::size_t>(problem.features)),
      w_(static_cast<std::size_t>(model_size(problem.features, options)), 0.0f) {
  if (o_.step == Step::adagrad) g2_.assign(w_.size(), 0.0);
  if (o_.step == Step::ftrl) ftrl_.resize(w_.size());
  if (o_.step == Step::adarevision) state_.resize(w_.size());
}

template <Step S>
float SerialSlr::weight(std::size_t f) const {
  if constexpr (S == Step::ftrl) return ftrl_weight(ftrl_[f], o_);
  else return w_[f];
}

// One weight's step for gradient g of the data term, w the weight the sample read.
template <Step S>
void SerialSlr::step(std::size_t f, float g, float w) {
  if constexpr (S == Step::plain) {
    w_[f] += prox_delta(w, g, o_.lr, o_);
  } else if constexpr (S == Step::adagrad) {
    const double g2 = g2_[f] + static_cast<double>(g) * g;
    g2_[f] += static_cast<double>(g) * g;
    w_[f] += prox_delta(w, g, adagrad_rate(g2, o_), o_);
  } else if constexpr (S == Step::adarevision) {
    apply::AdaGrad{o_.lr}(w_[f], state_[f], g + o_.l2 * w);
  } else {
    ftrl_[f] += ftrl_delta(ftrl_[f], w, g, o_);
  }
}

template <Step S>
Fit SerialSlr::pass_with() {
  const std::int32_t* feature = p_.feature.data();
  const float* value = p_.value.data();
  Fit fit;
  for (const Sample& s : p_.train) {
    float* read = weights_read(static_cast<std::size_t>(s.nnz) + 1);
    float z = read[0] = o_.bias ? weight<S>(bias_) : 0.0f;
    for (std::int64_t k = 0; k < s.nnz; ++k)
      z += (read[k + 1] = weight<S>(static_cast<std::size_t>(feature[s.begin + k]))) * value[s.begin + k];
    measure(sigmoid(z), s.label, fit.log_loss, fit.correct);
    const float g = sigmoid(z) - s.label;
    for (std::int64_t k = 0; k < s.nnz; ++k)
      step<S>(static_cast<std::size_t>(feature[s.begin + k]), g * value[s.begin + k], read[k + 1]);
    if (o_.bias) step<S>(bias_, g, read[0]);
  }
  fit.count = static_cast<std::int64_t>(p_.train.size());
  return fit;
}

Fit SerialSlr::pass() {
  Fit fit;
  switch (o_.step) {
    case Step::plain: fit = pass_with<Step::plain>(); break;
    case Step::adagrad: fit = pass_with<Step::adagrad>(); break;
    case Step::adarevision: fit = pass_with<Step::adarevision>(); break;
    case Step::ftrl: fit = pass_with<Step::ftrl>(); break;
  }
  if (o_.step == Step::ftrl)
    for (std::size_t f = 0; f < w_.size(); ++f) w_[f] = ftrl_weight(ftrl_[f], o_);
  return fit;
}

Fit SerialSlr::fit(const std::vector<Sample>& samples) const {
  Fit f;
  for (const Sample& s : samples) {
    float z = o_.bias ? w_[bias_] : 0.0f;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      z += w_[static_cast<std::size_t>(p_.feature[static_cast<std::size_t>(k)])] * p_.value[static_cast<std::size_t>(k)];
    measure(sigmoid(z), s.label, f.log_loss, f.correct);
  }
  f.count = static_cast<std::int64_t>(samples.size());
  return f;
}

}  // namespace strata::apps::slr
