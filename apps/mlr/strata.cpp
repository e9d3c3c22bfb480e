// Multinomial logistic regression by mini-batch SGD on Strata: serial.cpp with the
// weights a DistArray written through a Buffer a row at a time and the loop over
// batches a parallel_for. Kept line for line alike with serial.cpp.
#include "mlr/strata.hpp"

#include <optional>

namespace strata::apps::mlr {

// One body call's readers and writers (each taken once per call: the cache lookups
// leave the inner loops), and serial.cpp's row() and step() over them.
struct StrataMlr::Access {
  const StrataMlr& m;
  const Options& o_ = m.o_;
  const std::size_t k_ = m.k_;
  ArrayReader<float, 2> w_;
  BufferWriter<Buffer<float, 2>> w_sum_;
  std::optional<ArrayReader<double, 1>> g2_;
  std::optional<BufferWriter<Buffer<double, 1>>> g2_sum_;

  explicit Access(const StrataMlr& model) : m(model), w_(m.w_.reader()), w_sum_(m.w_sum_->writer()) {
    if (o_.step == Step::adagrad) g2_.emplace(m.g2_), g2_sum_.emplace(*m.g2_sum_);
  }

  std::span<const float> row(std::int64_t r) const { return w_.read_row(r); }

  void step(std::int64_t r, std::span<const float> g, std::int32_t touches) const {
    float* delta = delta_room(k_);
    float eta = o_.lr;
    if (o_.step == Step::adagrad) {
      const double g2 = mean_square(g);
      eta = adagrad_rate(g2_->read({r}) + g2, o_);
      g2_sum_->add({r}, g2);
    }
    row_delta(delta, g, row(r), touches, eta, o_);
    w_sum_.add_row(r, std::span<const float>(delta, k_));
  }
};

StrataMlr::StrataMlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop)
    : rt_(rt), p_(problem), o_(options), loop_(loop), k_(static_cast<std::size_t>(problem.classes)),
      bias_(problem.features), rows_(model_rows(problem.features, options)),
      B_(array_of(rt, batches(static_cast<std::int64_t>(problem.train.size()), options.batch))),
      T_(array_of(rt, problem.test)),
      w_(DistArray<float, 2>::zeros(rt, {rows_, problem.classes})), pass_loss_(rt), pass_correct_(rt) {
  w_.set_name("W");
  o_.clock_every = clock_for(problem, options, rt.size(), rt.threads());
  Consistency c = o_.hybrid ? hybrid() : ssp(o_.staleness);
  c.every(o_.clock_every);
  if (o_.thread_replicas) c.replica_per_thread();
  w_sum_ = std::make_unique<Buffer<float, 2>>(w_, apply::sum(), c);
  if (o_.step == Step::adagrad) {
    g2_ = DistArray<double, 1>::zeros(rt, {rows_});
    g2_.set_name("g2");
    g2_sum_ = std::make_unique<Buffer<double, 1>>(g2_, apply::sum(), c);
  }
}

// The option and auto_clock's choice count samples; the loop's iterations are batches.
std::int64_t StrataMlr::clock_for(const Problem& p, const Options& o, int ranks, int threads) {
  std::int64_t samples = o.clock_every;
  if (samples < 0) {
    samples = auto_clock(static_cast<std::int64_t>(p.train.size()), train_nonzeros(p), model_rows(p.features, o),
                         p.classes, ranks, threads, o.hybrid, o.thread_replicas);
  }
  return samples == 0 ? 0 : std::max<std::int64_t>(1, samples / o.batch);
}

void StrataMlr::scores(const Access& a, const Sample& s, float* z) const {
  sample_scores(z, k_, o_.bias ? a.row(bias_) : std::span<const float>{}, p_, s,
                [&](std::int64_t f) { return a.row(f); });
}

Fit StrataMlr::pass() {
  auto body = [&](const Index<1>&, const Batch& b) {
    const Access a(*this);
    RowSums& sums = thread_row_sums(rows_, k_);
    double loss = 0;
    std::int64_t correct = 0;
    for (std::int64_t i = b.first; i < b.first + b.count; ++i) {
      const Sample& s = p_.train[static_cast<std::size_t>(i)];
      float* z = scores_room(k_);
      scores(a, s, z);
      const float p = softmax(z, k_, s.label);
      measure(p, predicted(z, k_) == s.label, loss, correct);
      z[s.label] -= 1.0f;  // the scores' gradient: p - onehot(label)
      for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
        sums.add(p_.feature[static_cast<std::size_t>(k)], p_.value[static_cast<std::size_t>(k)], z);
      if (o_.bias) sums.add(bias_, 1.0f, z);
    }
    pass_loss_ += loss;
    pass_correct_ += correct;
    for (std::size_t j = 0; j < sums.rows().size(); ++j) a.step(sums.rows()[j], sums.sum(j), sums.count(j));
    sums.clear();
  };
  report_ = run_or_explain(explaining_, B_, body, loop_);
  Fit f;
  f.log_loss = pass_loss_.take();
  f.correct = pass_correct_.take();
  f.count = static_cast<std::int64_t>(p_.train.size());
  return f;
}

Fit StrataMlr::fit(DistArray<Sample, 1>& samples, std::source_location where) {
  Accumulator<double> log_loss(rt_);
  Accumulator<std::int64_t> correct(rt_);
  run_or_explain(explaining_, samples, [&](const Index<1>&, const Sample& s) {
    const auto w = w_.reader();
    float* z = scores_room(k_);
    sample_scores(z, k_, o_.bias ? w.read_row(bias_) : std::span<const float>{}, p_, s,
                  [&](std::int64_t f) { return w.read_row(f); });
    const float p = softmax(z, k_, s.label);
    double l = 0;
    std::int64_t c = 0;
    measure(p, predicted(z, k_) == s.label, l, c);
    log_loss += l;
    correct += c;
  }, LoopOptions{}, where);
  Fit f;
  f.log_loss = log_loss.take();
  f.correct = correct.take();
  f.count = samples.nnz();
  return f;
}

void StrataMlr::explain() {
  explaining_ = true;
  pass();
  explaining_ = false;
}

}  // namespace strata::apps::mlr
