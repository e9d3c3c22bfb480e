// Sparse logistic regression by SGD on Strata: serial.cpp with the model's arrays
// DistArrays written through Buffers and the loop a parallel_for. Kept line for
// line alike with serial.cpp.
#include "slr/strata.hpp"

#include <optional>

namespace strata::apps::slr {

namespace {

DistArray<Sample, 1> sample_array(Runtime& rt, const std::vector<Sample>& samples) {
  return DistArray<Sample, 1>::generate(rt, {static_cast<std::int64_t>(samples.size())},
                                        [&](const Index<1>& i) { return samples[static_cast<std::size_t>(i[0])]; });
}

template <class T>
std::unique_ptr<Buffer<T, 1>> sum_buffer(DistArray<T, 1>& a, const Consistency& c) {
  return std::make_unique<Buffer<T, 1>>(a, apply::sum(), c);
}

}  // namespace

// serial.cpp's weight() and step() over one body call's readers and writers (each
// taken once per call: the cache lookups leave the inner loops).
template <Step S>
struct StrataSlr::Access {
  const StrataSlr& m;
  const Options& o_ = m.o_;
  std::optional<ArrayReader<float, 1>> w_;
  std::optional<ArrayReader<double, 1>> g2_;
  std::optional<ArrayReader<FtrlState, 1>> ftrl_;
  std::optional<BufferWriter<Buffer<float, 1>>> w_sum_;
  std::optional<BufferWriter<Buffer<double, 1>>> g2_sum_;
  std::optional<BufferWriter<Buffer<FtrlState, 1>>> ftrl_sum_;

  explicit Access(const StrataSlr& model) : m(model) {
    if constexpr (S != Step::ftrl) w_.emplace(m.w_);
    if constexpr (S == Step::plain || S == Step::adagrad) w_sum_.emplace(*m.w_sum_);
    if constexpr (S == Step::adagrad) g2_.emplace(m.g2_), g2_sum_.emplace(*m.g2_sum_);
    if constexpr (S == Step::ftrl) ftrl_.emplace(m.ftrl_), ftrl_sum_.emplace(*m.ftrl_sum_);
  }

  float weight(std::int64_t f) const {
    if constexpr (S == Step::ftrl) return ftrl_weight(ftrl_->read({f}), o_);
    else return w_->read({f});
  }

  void step(std::int64_t f, float g, float w) const {
    if constexpr (S == Step::plain) {
      w_sum_->add({f}, prox_delta(w, g, o_.lr, o_));
    } else if constexpr (S == Step::adagrad) {
      const double g2 = g2_->read({f}) + static_cast<double>(g) * g;
      g2_sum_->add({f}, static_cast<double>(g) * g);
      w_sum_->add({f}, prox_delta(w, g, adagrad_rate(g2, o_), o_));
    } else if constexpr (S == Step::adarevision) {
      m.ada_->add({f}, g + o_.l2 * w);
    } else {
      ftrl_sum_->add({f}, ftrl_delta(ftrl_->read({f}), w, g, o_));
    }
  }
};

StrataSlr::StrataSlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop)
    : rt_(rt), p_(problem), o_(options), loop_(loop), bias_(problem.features), X_(sample_array(rt, problem.train)),
      T_(sample_array(rt, problem.test)), w_(DistArray<float, 1>::zeros(rt, {model_size(problem.features, options)})),
      pass_loss_(rt), pass_correct_(rt) {
  w_.set_name("w");
  o_.clock_every = clock_for(problem, options, rt.size(), rt.threads());
  Consistency c = o_.hybrid ? hybrid() : ssp(o_.staleness);
  c.every(o_.clock_every);
  if (o_.thread_replicas) c.replica_per_thread();
  const Shape<1> shape = w_.shape();
  if (o_.step == Step::plain || o_.step == Step::adagrad) w_sum_ = sum_buffer(w_, c);
  if (o_.step == Step::adagrad) {
    g2_ = DistArray<double, 1>::zeros(rt, shape);
    g2_.set_name("g2");
    g2_sum_ = sum_buffer(g2_, c);
  }
  if (o_.step == Step::ftrl) {
    ftrl_ = DistArray<FtrlState, 1>::zeros(rt, shape);
    ftrl_.set_name("ftrl");
    ftrl_sum_ = sum_buffer(ftrl_, c);
  }
  if (o_.step == Step::adarevision)
    ada_ = std::make_unique<Buffer<float, 1, apply::AdaRevision>>(w_, apply::adarevision(o_.lr), c);
}

std::int64_t StrataSlr::clock_for(const Problem& p, const Options& o, int ranks, int threads) {
  if (o.clock_every >= 0) return o.clock_every;
  std::int64_t nonzeros = 0;
  for (const Sample& s : p.train) nonzeros += s.nnz;
  return apps::auto_clock(static_cast<std::int64_t>(p.train.size()), nonzeros, model_size(p.features, o), ranks,
                          threads, o.hybrid, o.thread_replicas);
}

RelaxedStats StrataSlr::stats() const {
  return w_sum_ ? w_sum_->stats() : ftrl_sum_ ? ftrl_sum_->stats() : ada_->stats();
}

template <Step S>
void StrataSlr::pass_with() {
  const std::int32_t* feature = p_.feature.data();
  const float* value = p_.value.data();
  auto body = [&, feature, value](const Index<1>&, const Sample& s) {
    const Access<S> a(*this);
    float* read = weights_read(static_cast<std::size_t>(s.nnz) + 1);
    float z = read[0] = o_.bias ? a.weight(bias_) : 0.0f;
    const std::int32_t* f = feature + s.begin;
    const float* x = value + s.begin;
    const std::int64_t n = s.nnz;
    for (std::int64_t k = 0; k < n; ++k)
      z += (read[k + 1] = a.weight(f[k])) * x[k];
    double loss = 0;
    std::int64_t correct = 0;
    measure(sigmoid(z), s.label, loss, correct);
    pass_loss_ += loss;
    pass_correct_ += correct;
    const float g = sigmoid(z) - s.label;
    for (std::int64_t k = 0; k < n; ++k) a.step(f[k], g * x[k], read[k + 1]);
    if (o_.bias) a.step(bias_, g, read[0]);
  };
  report_ = run_or_explain(explaining_, X_, body, loop_);
}

Fit StrataSlr::pass() {
  switch (o_.step) {
    case Step::plain: pass_with<Step::plain>(); break;
    case Step::adagrad: pass_with<Step::adagrad>(); break;
    case Step::adarevision: pass_with<Step::adarevision>(); break;
    case Step::ftrl: pass_with<Step::ftrl>(); break;
  }
  if (o_.step == Step::ftrl && !explaining_) {  // the owners' sums are complete: each rank derives its own part
    const auto state = ftrl_.local_values();
    const auto w = w_.local_values();
    for (std::size_t f = 0; f < w.size(); ++f) w[f] = ftrl_weight(state[f], o_);
  }
  Fit f;
  f.log_loss = pass_loss_.take();
  f.correct = pass_correct_.take();
  f.count = X_.nnz();
  return f;
}

Fit StrataSlr::fit(DistArray<Sample, 1>& samples, std::source_location where) {
  Accumulator<double> log_loss(rt_);
  Accumulator<std::int64_t> correct(rt_);
  run_or_explain(explaining_, samples, [&](const Index<1>&, const Sample& s) {
    const auto w = w_.reader();
    float z = o_.bias ? w.read({bias_}) : 0.0f;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k)
      z += w.read({p_.feature[static_cast<std::size_t>(k)]}) * p_.value[static_cast<std::size_t>(k)];
    double l = 0;
    std::int64_t c = 0;
    measure(sigmoid(z), s.label, l, c);
    log_loss += l;
    correct += c;
  }, LoopOptions{}, where);
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
