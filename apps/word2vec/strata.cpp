// word2vec (skip-gram, negative sampling) on Strata: serial.cpp with the input and
// output rows DistArrays written through Buffers a row at a time and the loop over
// sentences a parallel_for. Kept line for line alike with serial.cpp.
#include "word2vec/strata.hpp"

#include "common/auto_clock.hpp"
#include "strata/kernels.hpp"

namespace strata::apps::word2vec {

// One body call's readers and writers (each taken once per call: the cache lookups
// leave the inner loops).
struct StrataWord2vec::Access {
  ArrayReader<float, 2> in, out;
  BufferWriter<Buffer<float, 2>> in_sum, out_sum;
  explicit Access(const StrataWord2vec& m)
      : in(m.in_.reader()), out(m.out_.reader()), in_sum(m.in_sum_->writer()), out_sum(m.out_sum_->writer()) {}
};

StrataWord2vec::StrataWord2vec(Runtime& rt, const Corpus& corpus, const Options& options, const LoopOptions& loop)
    : rt_(rt), c_(corpus), o_(options), loop_(loop), dim_(static_cast<std::size_t>(options.dim)),
      noise_(corpus.counts, options.noise_power), chance_(keep_chances(corpus.counts, options.subsample)),
      S_(array_of(rt, corpus.train.list)), T_(array_of(rt, corpus.test.list)),
      in_(DistArray<float, 2>::generate(
          rt, {static_cast<std::int64_t>(corpus.words.size()), options.dim},
          [&](const Index<2>& i) { return initial_value(o_.seed, i[0], static_cast<int>(i[1]), o_.dim); })),
      out_(DistArray<float, 2>::zeros(rt, {static_cast<std::int64_t>(corpus.words.size()), options.dim})),
      pass_loss_(rt), pass_pairs_(rt) {
  in_.set_name("in");
  out_.set_name("out");
  o_.clock_every = clock_for(corpus, options, rt.size(), rt.threads());
  Consistency c = o_.hybrid ? hybrid() : ssp(o_.staleness);
  c.every(o_.clock_every);
  if (o_.thread_replicas) c.replica_per_thread();
  in_sum_ = std::make_unique<Buffer<float, 2>>(in_, apply::sum(), c);
  out_sum_ = std::make_unique<Buffer<float, 2>>(out_, apply::sum(), c);
}

// One rank under Hybrid shares the rows lock-free: one clock a pass. Across ranks a
// clock moves the rows a worker's sentences touched since the last one (most of the
// model, for a text's frequent words), so about 10 clocks a pass. Replicas per thread
// see each other's steps only at clocks, which inside a rank are cheap (no messages)
// but touch most rows: a clock every kReplicaClockTokens training tokens of a worker,
// or 3 per word of the vocabulary when that is more, so the merges stay a small part
// of the work. Measured on two corpora of about 5,000 words: the generated one held
// its held-out loss at 16,000 tokens a clock and fell behind at 81,000 (1.745 against
// 1.653); KJV kept it at 17,500 (2.971; serial 2.978) and ran 12 % faster a pass than
// at 3,500.
std::int64_t StrataWord2vec::clock_for(const Corpus& c, const Options& o, int ranks, int threads) {
  constexpr std::int64_t kReplicaClockTokens = 16000;
  if (o.clock_every >= 0) return o.clock_every;
  const bool replicas = replicas_per_thread(o.thread_replicas, threads);
  if (ranks == 1 && o.hybrid && !replicas) return 0;
  const auto sentences = static_cast<std::int64_t>(c.train.list.size());
  const auto per_worker = sentences / (static_cast<std::int64_t>(ranks) * threads);
  if (!replicas) return std::max<std::int64_t>(1, per_worker / 10);
  const auto words = static_cast<std::int64_t>(c.words.size());
  const auto tokens = static_cast<double>(std::max(kReplicaClockTokens, 3 * words));
  const double per_sentence =
      static_cast<double>(c.train_tokens()) / static_cast<double>(std::max<std::int64_t>(1, sentences));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(tokens / std::max(1.0, per_sentence)));
}

double StrataWord2vec::window(const Access& a, std::int32_t word, int m, float lr, Draws& draws, Scratch& s) const {
  draw_targets(s, word, o_.negatives, noise_, draws);
  const auto targets = static_cast<std::size_t>(o_.negatives) + 1;
  std::fill_n(s.in_step.begin(), static_cast<std::size_t>(m) * dim_, 0.0f);
  std::fill_n(s.out_step.begin(), targets * dim_, 0.0f);
  double loss = 0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j) {
    const float* in = a.in.read_row(s.context[j]).data();
    for (std::size_t k = 0; k < targets; ++k) {
      const float* out = a.out.read_row(s.target[k]).data();
      const float g = target_step(sigmoid_, kernels::dot(in, out, dim_), k == 0, lr, loss);
      kernels::axpy(g, out, s.in_step.data() + j * dim_, dim_);
      kernels::axpy(g, in, s.out_step.data() + k * dim_, dim_);
    }
  }
  for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j)
    a.in_sum.add_row(s.context[j], std::span<const float>(s.in_step.data() + j * dim_, dim_));
  for (std::size_t k = 0; k < targets; ++k)
    a.out_sum.add_row(s.target[k], std::span<const float>(s.out_step.data() + k * dim_, dim_));
  return loss;
}

double StrataWord2vec::pair(const Access& a, std::int32_t w, std::int32_t c, float lr, Draws& draws, Scratch& s) const {
  const float* hidden = a.in.read_row(w).data();
  float* grad = s.in_step.data();
  std::fill(grad, grad + dim_, 0.0f);
  double loss = 0;
  for (int n = 0; n <= o_.negatives; ++n) {
    const std::int32_t target = n == 0 ? c : draws.negative(noise_, c);
    const float* out = a.out.read_row(target).data();
    const float g = target_step(sigmoid_, kernels::dot(hidden, out, dim_), n == 0, lr, loss);
    kernels::axpy(g, out, grad, dim_);
    a.out_sum.add_scaled_row(target, g, std::span<const float>(hidden, dim_));
  }
  a.in_sum.add_row(w, std::span<const float>(grad, dim_));
  return loss;
}

Fit StrataWord2vec::pass() {
  auto body = [&](const Index<1>& k, const Sentence& sentence) {
    const Access a(*this);
    Scratch& s = scratch(o_);
    Draws draws(o_.seed, pass_, k[0]);
    const float lr = step_size(o_, pass_, sentence.begin, c_.train_tokens());
    draws.keep(c_.train, sentence, chance_, s.kept);
    const auto n = static_cast<std::int32_t>(s.kept.size());
    Fit fit;
    for (std::int32_t i = 0; i < n; ++i) {
      const int b = draws.window(o_.window);
      const std::int32_t first = std::max(0, i - b), last = std::min(n - 1, i + b);
      const std::int32_t word = s.kept[static_cast<std::size_t>(i)];
      if (o_.update == Update::pair) {
        for (std::int32_t j = first; j <= last; ++j)
          if (j != i) fit.loss += pair(a, word, s.kept[static_cast<std::size_t>(j)], lr, draws, s), ++fit.pairs;
        continue;
      }
      int m = 0;
      for (std::int32_t j = first; j <= last; ++j)
        if (j != i) s.context[static_cast<std::size_t>(m++)] = s.kept[static_cast<std::size_t>(j)];
      if (m > 0) fit.loss += window(a, word, m, lr, draws, s), fit.pairs += m;
    }
    pass_loss_ += fit.loss;
    pass_pairs_ += fit.pairs;
  };
  report_ = run_or_explain(explaining_, S_, body, loop_);
  if (!explaining_) ++pass_;
  Fit f;
  f.loss = pass_loss_.take();
  f.pairs = pass_pairs_.take();
  return f;
}

Fit StrataWord2vec::fit_test() {
  Accumulator<double> loss(rt_);
  Accumulator<std::int64_t> pairs(rt_);
  run_or_explain(explaining_, T_, [&](const Index<1>& k, const Sentence&) {
    const auto in = in_.reader();
    const auto out = out_.reader();
    const Fit f = held_out_sentence(c_.test, k[0], o_, noise_, [&](std::int32_t w, std::int32_t c) {
      return static_cast<double>(kernels::dot(in.read_row(w).data(), out.read_row(c).data(), dim_));
    });
    loss += f.loss;
    pairs += f.pairs;
  }, LoopOptions{});
  Fit f;
  f.loss = loss.take();
  f.pairs = pairs.take();
  return f;
}

void StrataWord2vec::explain() {
  explaining_ = true;
  pass();
  fit_test();
  explaining_ = false;
}

}  // namespace strata::apps::word2vec
