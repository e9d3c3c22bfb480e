// word2vec's options and the parts of its step both programs share, so that the
// serial program and its Strata twin draw and step exactly alike.
//
// Skip-gram with negative sampling. Words are sub-sampled and each kept word's window
// drawn in [1, window] as in word2vec; the step decays linearly to 0 over the run's
// tokens. Two ways to step (Options::update):
// * window (the default, as Ji et al.'s pWord2Vec, Intel 2016): the words of a kept
//   word's window are scored against the output rows of the word (label 1) and of
//   `negatives` noise words drawn once for the window (label 0; unigram^0.75 by
//   default), all from the rows as
//   the window found them; then each input row and each output row takes the sum of
//   its steps at once. A window writes (window words + negatives + 1) rows.
// * pair (as fastText's `skipgram`): for each word c of the window, the kept word's
//   input row is scored against the output rows of c and of `negatives` noise words of
//   its own; each output row steps at once, the input row after the last target. A
//   window writes (window words) x (negatives + 2) rows.
// Threads that share a model (Hogwild, Strata's Hybrid) pay for each row write another
// thread reads: a cache line moved between cores. The window step writes 4-5 times
// fewer rows for the same arithmetic, and scales on 2 cores where the pair step does
// not (docs/apps-word2vec.md).
//
// Every draw of a pass comes from a counter-based stream keyed by the seed, the pass
// and the sentence, so a sentence draws the same words whichever worker runs it and
// in whichever order: one worker's run equals the serial program bit for bit.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "strata/random.hpp"
#include "word2vec/problem.hpp"

namespace strata::apps::word2vec {

enum class Update {
  window,  ///< a window's words share their negatives; each row steps once a window
  pair,    ///< each (word, context) pair draws its negatives; output rows step at once
};

struct Options {
  Update update = Update::window;
  int dim = 100;             ///< a row's length
  int window = 5;            ///< largest distance of a context word (a word's window is drawn in [1, window])
  int negatives = 5;         ///< noise words per context word
  double subsample = 1e-4;   ///< sub-sampling threshold t (0: keep every word)
  double noise_power = 0.75; ///< noise words drawn with probability count^noise_power (word2vec's 0.75, fastText's 0.5)
  float lr = 0.05f;          ///< the first step size, decaying linearly to 0
  int epochs = 5;            ///< passes of the run: the decay's length
  std::uint64_t seed = 42;   ///< initial rows and every draw
  bool hybrid = true;        ///< Strata: Hybrid consistency (lock-free inside a rank), else SSP
  int staleness = 0;         ///< SSP bound (0: BSP)
  bool thread_replicas = false;  ///< Strata, Hybrid: a replica of the rows per worker thread
  std::int64_t clock_every = -1;  ///< sentences of a worker per clock; -1: auto_clock's
};

/// A pass's fit: each (word, context) pair's negative-sampling loss, summed.
struct Fit {
  double loss = 0;
  std::int64_t pairs = 0;
  double mean() const { return pairs > 0 ? loss / static_cast<double>(pairs) : 0; }
};

/// The initial value of element (w, j) of the input rows: uniform in [-0.5, 0.5) / dim,
/// as word2vec and fastText start (the output rows start at 0).
inline float initial_value(std::uint64_t seed, std::int64_t w, int j, int dim) {
  const CounterRng rng(seed, 0x57'32'56'49);
  const double u =
      rng.uniform(static_cast<std::uint64_t>(w) * static_cast<std::uint64_t>(dim) + static_cast<std::uint64_t>(j));
  return static_cast<float>((u - 0.5) / dim);
}

/// The logistic function and the log of its value, from tables over [-8, 8] (as word2vec
/// and fastText compute them): two loads instead of an exp and a log per target.
class Sigmoid {
 public:
  static constexpr int kSize = 512;
  static constexpr float kMax = 8;
  Sigmoid() {
    for (int i = 0; i <= kSize; ++i) {
      const double x = (2.0 * i / kSize - 1) * kMax;
      sigmoid_[static_cast<std::size_t>(i)] = static_cast<float>(1 / (1 + std::exp(-x)));
      const double p = (i + 1e-5) / kSize;
      log_[static_cast<std::size_t>(i)] = static_cast<float>(std::log(p));
    }
  }
  float operator()(float x) const {
    if (x <= -kMax) return 0;
    if (x >= kMax) return 1;
    return sigmoid_[static_cast<std::size_t>((x + kMax) * (kSize / kMax / 2))];
  }
  /// -log(p) for p in [0, 1].
  float neg_log(float p) const { return -log_[static_cast<std::size_t>(p * kSize)]; }

 private:
  std::array<float, kSize + 1> sigmoid_{}, log_{};
};

/// One target's part of a step, for the score z of a row against it: adds its loss to
/// `loss` (-log p for the positive target, -log(1 - p) for a noise word, p the
/// logistic of z) and returns the step's scale, lr * (label - p).
inline float target_step(const Sigmoid& sigmoid, float z, bool positive, float lr, double& loss) {
  const float p = sigmoid(z);
  loss += sigmoid.neg_log(positive ? p : 1 - p);
  return lr * ((positive ? 1.0f : 0.0f) - p);
}

/// The noise distribution, counts^power, as an alias table (Vose): a draw is one
/// 64-bit number, a table entry and a comparison.
class Noise {
 public:
  Noise(const std::vector<std::int64_t>& counts, double power);
  std::int32_t draw(std::uint64_t bits) const {
    const auto i = static_cast<std::size_t>(((bits >> 32) * prob_.size()) >> 32);
    return static_cast<double>(bits & 0xFFFFFFFFu) * 0x1.0p-32 < prob_[i] ? static_cast<std::int32_t>(i) : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<std::int32_t> alias_;
};

/// Each word's chance to be kept by sub-sampling: word2vec's (sqrt(f / t) + 1) t / f for
/// a word of frequency f, at most 1.
std::vector<float> keep_chances(const std::vector<std::int64_t>& counts, double subsample);

/// The draws of one sentence in one pass: which words sub-sampling keeps, each kept
/// word's window, and its negatives.
class Draws {
 public:
  Draws(std::uint64_t seed, int pass, std::int64_t sentence)
      : rng_(seed, (static_cast<std::uint64_t>(pass) << 40) ^ static_cast<std::uint64_t>(sentence)) {}
  /// The words of `s` that sub-sampling keeps, into `kept`.
  void keep(const Sentences& corpus, const Sentence& s, const std::vector<float>& chance,
            std::vector<std::int32_t>& kept) {
    kept.clear();
    for (std::int64_t t = s.begin; t < s.begin + s.count; ++t) {
      const std::int32_t w = corpus.tokens[static_cast<std::size_t>(t)];
      const float c = chance[static_cast<std::size_t>(w)];
      if (c >= 1 || rng_.uniform(next_++) < c) kept.push_back(w);
    }
  }
  /// A kept word's window: its context words are at distance 1 to the result.
  int window(int largest) { return 1 + static_cast<int>(rng_.below(next_++, static_cast<std::uint64_t>(largest))); }
  /// A noise word other than `positive` (after 10 draws that hit it, the 11th stands).
  std::int32_t negative(const Noise& noise, std::int32_t positive) {
    std::int32_t n = noise.draw(rng_.bits(next_++));
    for (int tries = 0; n == positive && tries < 10; ++tries) n = noise.draw(rng_.bits(next_++));
    return n;
  }

 private:
  CounterRng rng_;
  std::uint64_t next_ = 0;
};

/// The step size of a sentence whose first token is the training set's `token`-th, in
/// pass `pass` (0-based) of o.epochs: o.lr decayed linearly over the run's tokens.
inline float step_size(const Options& o, int pass, std::int64_t token, std::int64_t tokens) {
  const double done = (static_cast<double>(pass) * static_cast<double>(tokens) + static_cast<double>(token)) /
                      (static_cast<double>(o.epochs) * static_cast<double>(tokens));
  return static_cast<float>(o.lr * std::max(1e-4, 1 - done));
}

/// This thread's scratch: a sentence's kept words, a window's words and targets, and
/// the rows' summed steps (pair: the input row's; window: each window word's and each
/// target's). The body allocates nothing per sentence.
struct Scratch {
  std::vector<std::int32_t> kept, context, target;
  std::vector<float> in_step, out_step;
};
inline Scratch& scratch(const Options& o) {
  thread_local Scratch s;
  const auto d = static_cast<std::size_t>(o.dim), words = 2 * static_cast<std::size_t>(o.window);
  const auto targets = static_cast<std::size_t>(o.negatives) + 1;
  if (s.in_step.size() < words * d || s.out_step.size() < targets * d) {
    s.context.resize(words), s.target.resize(targets);
    s.in_step.resize(words * d), s.out_step.resize(targets * d);
  }
  return s;
}

/// The targets of a window step: the kept word (label 1), then noise words other than it.
inline void draw_targets(Scratch& s, std::int32_t word, int negatives, const Noise& noise, Draws& draws) {
  s.target[0] = word;
  for (int k = 1; k <= negatives; ++k) s.target[static_cast<std::size_t>(k)] = draws.negative(noise, word);
}

/// Held-out quality: the negative-sampling loss of the held-out sentences' pairs (every
/// word of a full window, no sub-sampling), with `negatives` noise words a pair drawn
/// from a stream of their own, the same for every model and layout; exact logs.
/// trim_test keeps the first sentences of up to kMaxTestPairs pairs, so that a large
/// held-out set costs a bounded time.
inline constexpr std::int64_t kMaxTestPairs = 200'000;

/// The pairs of a sentence of n words with windows of `window`.
inline std::int64_t pairs_of(std::int64_t n, int window) {
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < n; ++i)
    pairs += std::min<std::int64_t>(i, window) + std::min<std::int64_t>(n - 1 - i, window);
  return pairs;
}

/// Drops held-out sentences past the first kMaxTestPairs pairs.
inline void trim_test(Sentences& test, int window) {
  std::int64_t pairs = 0;
  std::size_t k = 0;
  while (k < test.list.size() && pairs < kMaxTestPairs) pairs += pairs_of(test.list[k++].count, window);
  test.list.resize(k);
}

/// log(1 + exp(-x)), without overflow.
inline double softplus_neg(double x) { return x > 0 ? std::log1p(std::exp(-x)) : -x + std::log1p(std::exp(x)); }

/// Held-out sentence k's pairs' loss, `dot(w, c)` being <input row w, output row c>.
template <class Dot>
Fit held_out_sentence(const Sentences& test, std::int64_t k, const Options& o, const Noise& noise, Dot&& dot) {
  Draws draws(o.seed ^ 0x7E57'7E57, 0, k);
  const Sentence& s = test.list[static_cast<std::size_t>(k)];
  const std::int32_t* words = test.tokens.data() + s.begin;
  Fit f;
  for (std::int32_t i = 0; i < s.count; ++i)
    for (std::int32_t j = std::max(0, i - o.window); j <= std::min(s.count - 1, i + o.window); ++j) {
      if (j == i) continue;
      f.loss += softplus_neg(dot(words[i], words[j]));
      for (int n = 0; n < o.negatives; ++n) f.loss += softplus_neg(-dot(words[i], draws.negative(noise, words[j])));
      ++f.pairs;
    }
  return f;
}

}  // namespace strata::apps::word2vec
