// Sparse logistic regression by SGD on Strata: serial.cpp with the weights a
// DistArray written through a Buffer and the loop a parallel_for. Kept line for
// line alike with serial.cpp.
#include "slr/strata.hpp"

namespace strata::apps::slr {

namespace {

DistArray<Sample, 1> sample_array(Runtime& rt, const std::vector<Sample>& samples) {
  return DistArray<Sample, 1>::generate(rt, {static_cast<std::int64_t>(samples.size())},
                                        [&](const Index<1>& i) { return samples[static_cast<std::size_t>(i[0])]; });
}

}  // namespace

StrataSlr::StrataSlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop)
    : rt_(rt), p_(problem), o_(options), loop_(loop), X_(sample_array(rt, problem.train)),
      T_(sample_array(rt, problem.test)), w_(DistArray<float, 1>::zeros(rt, {problem.features})) {
  w_.set_name("w");
  const Consistency c = ssp(o_.staleness).every(o_.clock_every);
  if (o_.adarevision) ada_ = std::make_unique<Buffer<float, 1, apply::AdaRevision>>(w_, apply::adarevision(o_.lr), c);
  else sum_ = std::make_unique<Buffer<float, 1>>(w_, apply::sum(), c);
}

void StrataSlr::pass() {
  const std::int32_t* feature = p_.feature.data();
  const float* value = p_.value.data();
  auto body = [&](const Index<1>&, const Sample& s) {
    const auto w = w_.reader();  // the cache lookup once per sample, not per non-zero
    float z = 0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) z += w.read({feature[k]}) * value[k];
    const float g = sigmoid(z) - s.label;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) {
      const std::int64_t f = feature[k];
      if (o_.adarevision) ada_->add({f}, g * value[k]);
      else sum_->add({f}, -o_.lr * g * value[k]);
    }
  };
  report_ = run_or_explain(explaining_, X_, body, loop_);
}

Fit StrataSlr::fit(DistArray<Sample, 1>& samples) {
  Accumulator<double> log_loss(rt_);
  Accumulator<std::int64_t> correct(rt_);
  run_or_explain(explaining_, samples, [&](const Index<1>&, const Sample& s) {
    const auto w = w_.reader();
    float z = 0;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      z += w.read({p_.feature[static_cast<std::size_t>(k)]}) * p_.value[static_cast<std::size_t>(k)];
    double l = 0;
    std::int64_t c = 0;
    measure(sigmoid(z), s.label, l, c);
    log_loss += l;
    correct += c;
  }, LoopOptions{});
  Fit f;
  f.log_loss = log_loss.take();
  f.correct = correct.take();
  f.count = samples.nnz();
  return f;
}

void StrataSlr::explain() {
  explaining_ = true;
  pass();
  explaining_ = false;
}

}  // namespace strata::apps::slr
