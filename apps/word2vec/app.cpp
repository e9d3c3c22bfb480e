// `strata train word2vec` / `strata explain word2vec`: options, data, and which program
// runs.
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/relaxed_options.hpp"
#include "common/train_loop.hpp"
#include "common/vector_file.hpp"
#include "word2vec/serial.hpp"
#include "word2vec/strata.hpp"

namespace strata::apps {

namespace {

word2vec::Corpus make_corpus(const RunConfig& c, const word2vec::Options& o) {
  const double holdout = holdout_fraction(c);
  const int min_count = static_cast<int>(c.options.integer("min-count", 1, 1'000'000'000));
  word2vec::Corpus corpus;
  if (c.data_path.empty()) {
    word2vec::SyntheticSpec s;
    s.sentences = c.synthetic.integer("sentences", 1);
    s.words = c.synthetic.integer("words", 2, INT32_MAX / 2);
    s.common = c.synthetic.integer("common", 0, INT32_MAX / 2);
    s.length = static_cast<std::int32_t>(c.synthetic.integer("length", 2, word2vec::kMaxSentence));
    s.spread = c.synthetic.real("spread", 0.1, 1e6);
    s.common_share = c.synthetic.real("common_share", 0, 1);
    MemoryNeeds()
        .add(fmt::format("--synthetic sentences={}", s.sentences), static_cast<double>(s.sentences),
             8.0 * s.length + 48)
        .check();
    corpus = word2vec::generate(s, holdout, min_count, c.seed);
  } else {
    check_data_file(c.data_path, "text file");
    corpus = word2vec::load_text(c.data_path, holdout, min_count, c.seed);
  }
  if (const std::string& test = c.options.text("test"); !test.empty()) {
    check_data_file(test, "text file", "--test");
    word2vec::attach_test(corpus, test);
  }
  word2vec::trim_test(corpus.test, o.window);
  // Each word has two rows, each held in the array, its Buffer's deltas and a cache.
  MemoryNeeds()
      .add(fmt::format("vocabulary of {} words x --dim {}", corpus.words.size(), o.dim),
           static_cast<double>(corpus.words.size()), 2.0 * 3 * 4 * o.dim + 64)
      .check();
  return corpus;
}

word2vec::Options make_options(const RunConfig& c) {
  word2vec::Options o;
  o.update = c.options.choice("update", {"window", "pair"}) == "window" ? word2vec::Update::window
                                                                        : word2vec::Update::pair;
  o.dim = static_cast<int>(c.options.integer("dim", 1, 10'000));
  o.window = static_cast<int>(c.options.integer("window", 1, 1000));
  o.negatives = static_cast<int>(c.options.integer("negatives", 0, 1000));
  o.subsample = c.options.real("subsample", 0, 1);
  o.noise_power = c.options.real("noise-power", 0, 1);
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 10));
  o.epochs = c.epochs;
  o.seed = c.seed;
  const RelaxedSettings relaxed = relaxed_settings(c);
  o.hybrid = relaxed.hybrid, o.staleness = relaxed.staleness, o.clock_every = relaxed.clock_every;
  o.thread_replicas = relaxed.thread_replicas;
  return o;
}

// The pass's metrics: its own loss (each pair's just before its step), the held-out
// pairs' loss, and on a generated corpus the planted ring's recovery (NaN for a pass
// restored from a checkpoint: the vectors are restored with the last one).
std::vector<Metric> metrics(const word2vec::Corpus& c, const word2vec::Fit& train, const word2vec::Fit& test,
                            const std::function<std::vector<float>()>& vectors, int dim, bool restored) {
  std::vector<Metric> m = {{"loss", train.mean()}, {"test_loss", test.mean()}};
  if (c.ring > 0)
    m.push_back({"similarity", restored ? std::numeric_limits<double>::quiet_NaN()
                                        : word2vec::planted_similarity(c, vectors(), dim)});
  return m;
}

// DIR/vectors.txt (the word vectors: input rows) and DIR/out.txt (output rows), in
// word2vec's text format.
void save(Runtime& rt, const std::string& dir, const word2vec::Corpus& c, const std::vector<float>& in,
          const std::vector<float>& out, int dim) {
  if (rt.rank() != 0) return;
  std::filesystem::create_directories(dir);
  write_vectors((std::filesystem::path(dir) / "vectors.txt").string(), c.words, in, dim);
  write_vectors((std::filesystem::path(dir) / "out.txt").string(), c.words, out, dim);
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const word2vec::Options o = make_options(c);
  const word2vec::Corpus corpus = make_corpus(c, o);
  const std::int64_t clock = word2vec::StrataWord2vec::clock_for(corpus, o, rt.size(), rt.threads());
  info(fmt::format(
      "{}; {} held-out sentences; {} steps, dim {}, window {}, {} negatives (unigram^{}), subsample {}, lr {}{}",
      corpus.source, corpus.test.list.size(), c.options.text("update"), o.dim, o.window, o.negatives, o.noise_power,
      o.subsample, o.lr,
      c.serial ? ""
               : fmt::format("; {}, {}",
                             consistency_name(o.hybrid, o.thread_replicas, o.staleness, rt.threads()),
                             clock ? fmt::format("a clock every {} sentences a worker", clock)
                                   : std::string("one clock a pass"))));
  const std::int64_t items = corpus.train_tokens();
  word2vec::Fit train;  // the pass's own
  if (c.serial) {
    word2vec::SerialWord2vec m(corpus, o);
    run_passes(rt, c, items, report, [&] { train = m.pass(); }, [&](bool restored) {
      return metrics(corpus, train, m.fit_test(), [&] { return m.in(); }, o.dim, restored);
    });
    if (!c.save_dir.empty()) save(rt, c.save_dir, corpus, m.in(), m.out(), o.dim);
  } else {
    word2vec::StrataWord2vec m(rt, corpus, o, data_parallel_loop(c, "word2vec", "word vectors"));
    run_passes(rt, c, items, report, [&] { train = m.pass(); },
               [&](bool restored) {
                 return metrics(corpus, train, m.fit_test(), [&] { return m.in().gather(); }, o.dim, restored);
               },
               [&] { info(describe_plan(m.report(), {"sentence"})); });
    if (!c.save_dir.empty()) {
      const std::vector<float> in = m.in().gather(), out = m.out().gather();
      save(rt, c.save_dir, corpus, in, out, o.dim);
    }
  }
}

void explain(Runtime& rt, const RunConfig& c) {
  const word2vec::Options o = make_options(c);
  const word2vec::Corpus corpus = make_corpus(c, o);
  word2vec::StrataWord2vec m(rt, corpus, o, data_parallel_loop(c, "word2vec", "word vectors"));
  m.explain();
}

}  // namespace

App word2vec_app() { return {word2vec_info(), train, explain, {}}; }

}  // namespace strata::apps
