// Multinomial logistic regression by mini-batch SGD, serial. strata.cpp is this file
// moved to Strata; the two are kept line for line alike so their diff shows what it
// costs.
#include "mlr/serial.hpp"

namespace strata::apps::mlr {

SerialMlr::SerialMlr(const Problem& problem, const Options& options)
    : p_(problem), o_(options), k_(static_cast<std::size_t>(problem.classes)), bias_(problem.features),
      rows_(model_rows(problem.features, options)),
      batches_(batches(static_cast<std::int64_t>(problem.train.size()), options.batch)),
      w_(static_cast<std::size_t>(rows_) * k_, 0.0f) {
  if (o_.step == Step::adagrad) g2_.assign(static_cast<std::size_t>(rows_), 0.0);
}

void SerialMlr::scores(const Sample& s, float* z) const {
  sample_scores(z, k_, o_.bias ? row(bias_) : std::span<const float>{}, p_, s, [&](std::int64_t f) { return row(f); });
}

void SerialMlr::step(std::int64_t r, std::span<const float> g, std::int32_t touches) {
  float* delta = delta_room(k_);
  float eta = o_.lr;
  if (o_.step == Step::adagrad) {
    const double g2 = mean_square(g);
    eta = adagrad_rate(g2_[static_cast<std::size_t>(r)] + g2, o_);
    g2_[static_cast<std::size_t>(r)] += g2;
  }
  row_delta(delta, g, row(r), touches, eta, o_);
  float* w = w_.data() + static_cast<std::size_t>(r) * k_;
  for (std::size_t c = 0; c < k_; ++c) w[c] += delta[c];
}

Fit SerialMlr::pass() {
  Fit fit;
  for (const Batch& b : batches_) {
    RowSums& sums = thread_row_sums(rows_, k_);
    double loss = 0;
    std::int64_t correct = 0;
    for (std::int64_t i = b.first; i < b.first + b.count; ++i) {
      const Sample& s = p_.train[static_cast<std::size_t>(i)];
      float* z = scores_room(k_);
      scores(s, z);
      const float p = softmax(z, k_, s.label);
      measure(p, predicted(z, k_) == s.label, loss, correct);
      z[s.label] -= 1.0f;  // the scores' gradient: p - onehot(label)
      for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
        sums.add(p_.feature[static_cast<std::size_t>(k)], p_.value[static_cast<std::size_t>(k)], z);
      if (o_.bias) sums.add(bias_, 1.0f, z);
    }
    fit.log_loss += loss;
    fit.correct += correct;
    for (std::size_t j = 0; j < sums.rows().size(); ++j) step(sums.rows()[j], sums.sum(j), sums.count(j));
    sums.clear();
  }
  fit.count = static_cast<std::int64_t>(p_.train.size());
  return fit;
}

Fit SerialMlr::fit(const std::vector<Sample>& samples) const {
  Fit f;
  float* z = scores_room(k_);
  for (const Sample& s : samples) {
    scores(s, z);
    const float p = softmax(z, k_, s.label);
    measure(p, predicted(z, k_) == s.label, f.log_loss, f.correct);
  }
  f.count = static_cast<std::int64_t>(samples.size());
  return f;
}

}  // namespace strata::apps::mlr
