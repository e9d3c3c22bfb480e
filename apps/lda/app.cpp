// `strata train lda` / `strata explain lda`: options, data, and which program runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/train_loop.hpp"
#include "lda/mh_sampler.hpp"
#include "lda/serial.hpp"
#include "lda/strata.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/files.hpp"

namespace strata::apps {

namespace {

// K: --topics, or "auto": the planted topics on synthetic data, 20 on real data.
int topics_to_learn(const RunConfig& c) {
  if (c.options.text("topics") != "auto") return static_cast<int>(c.options.integer("topics", 1, 100000));
  return c.data_path.empty() ? static_cast<int>(c.synthetic.integer("topics", 1, 100000)) : 20;
}

lda::Problem make_problem(Runtime& rt, const RunConfig& c) {
  if (!c.data_path.empty()) {
    check_data_file(c.data_path, "corpus");
    lda::Problem p = lda::load(rt, c.data_path);
    // The model counts documents x topics and words x topics: sizes a docword header
    // gives, checked before they are allocated.
    const std::int64_t topics = topics_to_learn(c);
    const auto k = static_cast<double>(topics);
    MemoryNeeds()
        .add(fmt::format("{}: {} documents with {} topics", c.data_path, p.docs, topics), double(p.docs) * k, 8)
        .add(fmt::format("{}: {} words with {} topics", c.data_path, p.words, topics), double(p.words) * k, 8)
        .check();
    return p;
  }
  lda::SyntheticSpec s;
  s.docs = c.synthetic.integer("docs", 1, INT32_MAX);
  s.words = c.synthetic.integer("words", 1, INT32_MAX);
  s.topics = static_cast<int>(c.synthetic.integer("topics", 1, 100000));
  s.doclen = c.synthetic.integer("doclen", 1, 1'000'000);
  // The generator keeps each planted topic's word distribution (a double) and its alias
  // table; the model counts words x topics and documents x topics; the corpus holds up
  // to docs x doclen (document, word, count) entries and a topic per token.
  const auto docs = static_cast<double>(s.docs), words = static_cast<double>(s.words);
  const auto topics = static_cast<double>(s.topics), doclen = static_cast<double>(s.doclen);
  MemoryNeeds()
      .add(fmt::format("--synthetic words={} with topics={}", s.words, s.topics), words * topics, 32)
      .add(fmt::format("--synthetic docs={} with doclen={}", s.docs, s.doclen), docs * 1.5 * doclen, 16)
      .add(fmt::format("--synthetic docs={} with topics={}", s.docs, s.topics), docs * topics, 4)
      .check();
  return lda::generate(s, c.seed);
}

lda::Options make_options(const RunConfig& c) {
  lda::Options o;
  o.topics = topics_to_learn(c);
  o.alpha = c.options.real("alpha", 1e-6, 1e6);
  o.beta = c.options.real("beta", 1e-6, 1e6);
  o.rounds = static_cast<int>(c.options.integer("rounds", 0, 1024));
  o.slices = static_cast<int>(c.options.integer("slices", 0, 1024));
  if (o.rounds > 0 && o.slices > 0 && o.rounds % o.slices != 0)
    throw OptionError(fmt::format("--slices {} must divide --rounds {}", o.slices, o.rounds));
  o.sampler = c.options.choice("sampler", {"sparse", "mh"}) == "mh" ? lda::Sampler::mh : lda::Sampler::sparse;
  o.mh_steps = static_cast<int>(c.options.integer("mh-steps", 1, lda::ChainStreams::kMaxSteps));
  o.seed = c.seed;
  return o;
}

std::vector<Metric> metrics(double loglik) {
  return {{"loss", -loglik}, {"loglik_per_token", loglik}, {"perplexity", std::exp(-loglik)}};
}

// Columns [0, K) of topic rows: the counts.
std::vector<std::int32_t> counts_of(const std::vector<std::int32_t>& rows, int K) {
  const auto width = static_cast<std::size_t>(lda::topic_row_width(K)), n = rows.size() / width;
  std::vector<std::int32_t> counts(n * static_cast<std::size_t>(K));
  for (std::size_t i = 0; i < n; ++i)
    std::copy_n(&rows[i * width], K, &counts[i * static_cast<std::size_t>(K)]);
  return counts;
}

// Top words of every topic, largest topics first, and for synthetic data how well
// the planted topics were recovered.
std::string summary(const lda::Problem& p, const lda::Options& o, const std::vector<std::int32_t>& word_rows, int n) {
  const int K = o.topics;
  const auto counts = counts_of(word_rows, K);
  std::string out;
  if (!p.planted.empty())
    out += fmt::format("topic recovery: {:.3f} (mean over the {} planted topics of the best cosine similarity with a "
                       "learned topic)\n",
                       lda::topic_recovery(p, counts, K, o.beta), p.planted.size());
  if (n <= 0) return out;
  std::vector<std::int64_t> size(static_cast<std::size_t>(K), 0);
  for (std::size_t i = 0; i < counts.size(); ++i) size[i % static_cast<std::size_t>(K)] += counts[i];
  std::vector<int> order(static_cast<std::size_t>(K));
  std::iota(order.begin(), order.end(), 0);
  auto tokens_of = [&](int k) { return size[static_cast<std::size_t>(k)]; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return tokens_of(a) > tokens_of(b); });
  const auto top = lda::top_words(counts, p.words, K, n);
  out += fmt::format("top {} words per topic (share of tokens):", n);
  for (const int k : order) {
    const double share = static_cast<double>(tokens_of(k)) / static_cast<double>(std::max<std::int64_t>(1, p.tokens));
    out += fmt::format("\n  topic {:>3} ({:4.1f} %):", k, 100.0 * share);
    for (const auto w : top[static_cast<std::size_t>(k)]) out += " " + p.word_name(w);
  }
  return out;
}

// The model as DistArrays for save_checkpoint: documents x K and words x K counts and
// the topic totals (the serial program's vectors too, so both save in one format),
// plus model.txt with the priors and vocab.txt with word names when known.
void save(Runtime& rt, const std::string& dir, const lda::Problem& p, const lda::Options& o,
          const DistArray<std::int32_t, 2>& doc_counts, const DistArray<std::int32_t, 2>& word_counts,
          const DistArray<std::int64_t, 1>& totals) {
  const std::filesystem::path d(dir);
  save_checkpoint(doc_counts, d / "doc_topic");
  save_checkpoint(word_counts, d / "word_topic");
  save_checkpoint(totals, d / "topic_totals");
  if (rt.rank() != 0) return;
  // Created afresh and renamed into place: a symlink planted at either name is replaced.
  detail::write_file_replacing(d / "model.txt",
                               fmt::format("lda\ntopics {}\nalpha {}\nbeta {}\ndocs {}\nwords {}\ntokens {}\n",
                                           o.topics, o.alpha, o.beta, p.docs, p.words, p.tokens),
                               false);
  if (!p.vocabulary.empty()) {
    std::string vocab;
    for (const auto& w : p.vocabulary) vocab += w + '\n';
    detail::write_file_replacing(d / "vocab.txt", vocab, false);
  }
}

// Counts of a Strata topic-row array, laid out like it (each rank copies its rows).
DistArray<std::int32_t, 2> as_counts(DistArray<std::int32_t, 2>& rows, int K) {
  const Partition& part = rows.partition();
  STRATA_CHECK(part.kind() == Partition::Kind::range && part.dim() == 0, "topic rows are split by row ranges");
  return DistArray<std::int32_t, 2>::generate(
      rows.runtime(), {rows.extent(0), K}, [&](const Index<2>& i) { return *rows.find(i); },
      Partition::range(0, rows.distribution().bounds()));
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const lda::Options o = make_options(c);  // a bad option is refused before the data is read
  const lda::Problem p = make_problem(rt, c);
  const int top = static_cast<int>(c.options.integer("top-words", 0, 1000));
  const std::string sampler = o.sampler == lda::Sampler::mh
                                  ? fmt::format("Metropolis-Hastings sampler, {} cycles a token", o.mh_steps)
                                  : std::string("SparseLDA sampler");
  info(fmt::format("{}; {} topics, alpha {}, beta {}; {}", p.source, o.topics, o.alpha, o.beta, sampler));
  if (c.serial) {
    lda::SerialLda m(p, o);
    run_passes(rt, c, p.tokens, report, [&] { m.pass(); }, [&] { return metrics(m.loglik_per_token()); });
    info(summary(p, o, m.word_topic(), top));
    if (!c.save_dir.empty()) {
      save(rt, c.save_dir, p, o, array_from(rt, counts_of(m.doc_topic(), o.topics), Shape<2>{p.docs, o.topics}),
           array_from(rt, counts_of(m.word_topic(), o.topics), Shape<2>{p.words, o.topics}),
           array_from(rt, m.totals(), Shape<1>{o.topics}));
    }
    return;
  }
  lda::StrataLda m(rt, p, o, c.plan);
  run_passes(rt, c, p.tokens, report, [&] { m.pass(); }, [&] { return metrics(m.loglik_per_token()); },
             [&] { info(describe_plan(m.report(), {"document", "word", "occurrence"})); });
  info(summary(p, o, m.word_topic().gather(), top));
  if (!c.save_dir.empty())
    save(rt, c.save_dir, p, o, as_counts(m.doc_topic(), o.topics), as_counts(m.word_topic(), o.topics), m.totals());
}

void explain(Runtime& rt, const RunConfig& c) {
  const lda::Options o = make_options(c);
  const lda::Problem p = make_problem(rt, c);
  lda::StrataLda m(rt, p, o, c.plan);
  m.explain();
}

}  // namespace

App lda_app() { return {lda_info(), train, explain, {}}; }  // no predict yet

}  // namespace strata::apps
