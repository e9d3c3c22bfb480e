// The LDA app: its plan, the consistency of its counts, reproducibility, the serial
// twin (bit for bit in the plan's order, and in quality with live totals), topic
// recovery on planted data, loaders and the app's train entry point. ctest runs
// these with 1, 2 and 4 ranks, 1 and 2 threads each.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common/app.hpp"
#include "lda/mh_sampler.hpp"
#include "lda/problem.hpp"
#include "lda/serial.hpp"
#include "lda/strata.hpp"
#include "strata/io/checkpoint.hpp"
#include "test_runtime.hpp"

namespace strata::apps {
namespace {
using strata::testing::rt;
using namespace std::string_literals;

// About 9,000 tokens of 5 planted topics: small enough for a few passes per test
// on 4 oversubscribed ranks.
lda::Problem small_corpus(std::uint64_t seed = 3) {
  lda::SyntheticSpec s;
  s.docs = 150;
  s.words = 400;
  s.topics = 5;
  s.doclen = 60;
  return lda::generate(s, seed);
}

lda::Options options(int topics = 5, lda::Sampler sampler = lda::Sampler::sparse) {
  lda::Options o;
  o.topics = topics;
  o.seed = 11;
  o.sampler = sampler;
  return o;
}

lda::Options mh(int topics = 5) { return options(topics, lda::Sampler::mh); }

// 3 planted topics over 200 words in long documents: chains that converge within a few
// passes (on smaller corpora either sampler may stay a while in a mode with topics merged).
lda::Problem converging_corpus() {
  lda::SyntheticSpec s;
  s.docs = 100;
  s.words = 200;
  s.topics = 3;
  s.doclen = 200;
  return lda::generate(s, 5);
}

// The counts columns of a model's word rows, gathered (words x K).
std::vector<std::int32_t> word_counts(lda::StrataLda& m, int K) {
  const auto rows = m.word_topic().gather();
  std::vector<std::int32_t> counts;
  for (std::size_t i = 0; i < rows.size(); i += static_cast<std::size_t>(lda::topic_row_width(K)))
    counts.insert(counts.end(), &rows[i], &rows[i] + K);
  return counts;
}

// The model of a Strata run, gathered on every rank.
struct Model {
  std::vector<std::int32_t> doc_topic, word_topic, topics;
  std::vector<std::int64_t> totals;
  bool operator==(const Model&) const = default;
};

Model gather(lda::StrataLda& m) {
  Model g{m.doc_topic().gather(), m.word_topic().gather(), {}, m.totals().gather()};
  for (const auto& e : m.topics().gather_entries()) g.topics.push_back(e.value);  // corpus order
  return g;
}

Model model_of(const lda::SerialLda& m) { return {m.doc_topic(), m.word_topic(), m.topics(), m.totals()}; }

// Counts are exactly those of the token assignments, and the rows' non-zero lists
// match their counts.
void expect_consistent(const lda::Problem& p, int K, const Model& g) {
  const auto W = static_cast<std::size_t>(lda::topic_row_width(K));
  std::vector<std::int32_t> docs(static_cast<std::size_t>(p.docs) * W, 0);
  std::vector<std::int32_t> words(static_cast<std::size_t>(p.words) * W, 0);
  std::vector<std::int64_t> totals(static_cast<std::size_t>(K), 0);
  ASSERT_EQ(static_cast<std::int64_t>(g.topics.size()), p.tokens);
  std::size_t n = 0;
  for (const auto& e : p.entries)
    for (std::int32_t occ = 0; occ < e.count; ++occ) {
      const auto k = g.topics[n++];
      ASSERT_TRUE(k >= 0 && k < K);
      ++docs[static_cast<std::size_t>(e.doc) * W + static_cast<std::size_t>(k)];
      ++words[static_cast<std::size_t>(e.word) * W + static_cast<std::size_t>(k)];
      ++totals[static_cast<std::size_t>(k)];
    }
  auto check_rows = [&](const std::vector<std::int32_t>& got, const std::vector<std::int32_t>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size() / W; ++i) {
      const lda::TopicRowView row(std::span(&got[i * W], W), K);
      ASSERT_TRUE(row.well_formed()) << what << " row " << i;
      for (int k = 0; k < K; ++k)
        ASSERT_EQ(row.count(k), want[i * W + static_cast<std::size_t>(k)]) << what << " row " << i;
    }
  };
  check_rows(g.doc_topic, docs, "document");
  check_rows(g.word_topic, words, "word");
  EXPECT_EQ(g.totals, totals);
}

TEST(Lda, PlanIsTwoDOverDocumentsAndWords) {
  const auto p = small_corpus();
  lda::StrataLda m(rt(), p, options());
  m.pass();
  const auto& c = m.report();
  EXPECT_EQ(c.strategy, analysis::Strategy::two_d) << m.report().explain();
  EXPECT_EQ(std::min(c.space_dim, c.time_dim), 0);
  EXPECT_EQ(std::max(c.space_dim, c.time_dim), 1);
  // Word rows through a Buffer as well: only document rows are written in place.
  lda::StrataLda dp(rt(), p, options(), analysis::Strategy::data_parallel);
  dp.pass();
  EXPECT_EQ(dp.report().strategy, analysis::Strategy::data_parallel) << dp.report().explain();
  EXPECT_EQ(dp.report().space_dim, 0);
}

TEST(Lda, CountsMatchTheAssignmentsAfterPasses) {
  const auto p = small_corpus();
  for (const auto plan : {std::optional<analysis::Strategy>{}, std::optional{analysis::Strategy::data_parallel}})
    for (const auto& o : {options(), mh()}) {
      lda::StrataLda m(rt(), p, o, plan);
      expect_consistent(p, 5, gather(m));
      for (int pass = 0; pass < 3; ++pass) m.pass();
      SCOPED_TRACE(plan ? "data-parallel" : "auto");
      SCOPED_TRACE(o.sampler == lda::Sampler::mh ? "mh" : "sparse");
      expect_consistent(p, 5, gather(m));
    }
}

TEST(Lda, RunsWithTheSameSeedAreBitIdentical) {
  const auto p = small_corpus();
  Model first;
  for (int run = 0; run < 2; ++run) {
    lda::StrataLda m(rt(), p, options());
    for (int pass = 0; pass < 3; ++pass) m.pass();
    if (run == 0) first = gather(m);
    else EXPECT_TRUE(gather(m) == first);
  }
}

// Strata's run equals the serial program visiting the tokens in the plan's
// equivalent order with the totals frozen for each pass (what the Buffer does):
// every count, every non-zero list's order and every assignment.
void expect_serial_twin_in_plans_order(const lda::Options& o) {
  const auto p = small_corpus();
  lda::StrataLda m(rt(), p, o);
  lda::SerialLda twin(p, o, lda::SerialLda::Totals::per_pass);
  for (int pass = 0; pass < 3; ++pass) {
    m.pass();
    if (pass == 0) twin.set_order(m.equivalent_order());
    twin.pass();
  }
  const Model got = gather(m), want = model_of(twin);
  EXPECT_EQ(got.topics, want.topics);
  EXPECT_EQ(got.doc_topic, want.doc_topic);
  EXPECT_EQ(got.word_topic, want.word_topic);
  EXPECT_EQ(got.totals, want.totals);
  // The same model; only the order of the sum over tokens differs (per thread).
  const double a = m.loglik_per_token(), b = twin.loglik_per_token();
  EXPECT_NEAR(a, b, 1e-12 * std::abs(b));
}
TEST(Lda, EqualsTheSerialTwinInThePlansOrder) { expect_serial_twin_in_plans_order(options()); }
// The Metropolis-Hastings sampler too: its proposals are built from the rows as a
// pass begins, and each token's chain draws from its own counters.
TEST(Lda, MetropolisHastingsEqualsTheSerialTwinInThePlansOrder) { expect_serial_twin_in_plans_order(mh()); }

// With live totals (exact collapsed Gibbs) the serial chain is another chain: while
// they burn in, two chains differ by several percent whichever programs run them (on
// small corpora some stay a while in a mode with two topics merged). On a corpus
// whose chains converge within a few passes, Strata's ends within 1 % of serial's:
// freezing the totals for a pass costs nothing measurable.
TEST(Lda, TracksTheLiveTotalsSerialProgramWithinOnePercent) {
  const auto p = converging_corpus();
  lda::StrataLda m(rt(), p, options(3));
  lda::SerialLda serial(p, options(3));
  for (int pass = 1; pass <= 10; ++pass) {
    m.pass();
    serial.pass();
  }
  const double a = m.loglik_per_token(), b = serial.loglik_per_token();
  EXPECT_LT(std::abs(a - b), 0.01 * std::abs(b)) << a << " vs " << b;
}

TEST(Lda, RecoversPlantedTopics) {
  const auto p = small_corpus(8);
  lda::StrataLda m(rt(), p, options());
  const double before = m.loglik_per_token();
  for (int pass = 0; pass < 15; ++pass) m.pass();
  const double after = m.loglik_per_token();
  EXPECT_GT(after, before + 0.3) << before << " -> " << after;
  EXPECT_GT(lda::topic_recovery(p, word_counts(m, 5), 5, 0.01), 0.8);
}

// The Metropolis-Hastings sampler learns the planted topics and ends at the exact
// sampler's likelihood.
TEST(Lda, MetropolisHastingsReachesTheExactSamplersModel) {
  const auto p = converging_corpus();
  lda::StrataLda exact(rt(), p, options(3)), m(rt(), p, mh(3));
  const double before = m.loglik_per_token();
  for (int pass = 0; pass < 20; ++pass) {
    exact.pass();
    m.pass();
  }
  const double after = m.loglik_per_token(), want = exact.loglik_per_token();
  EXPECT_GT(after, before + 0.3) << before << " -> " << after;
  EXPECT_LT(std::abs(after - want), 0.01 * std::abs(want)) << after << " vs the exact sampler's " << want;
  EXPECT_GT(lda::topic_recovery(p, word_counts(m, 3), 3, 0.01), 0.9);
}

// The alias tables draw each topic with exactly its proposal probability: the mass
// of topic k summed over the table's slots equals q(k) up to the float thresholds.
TEST(LdaMh, AliasTablesHoldTheProposal) {
  const int K = 7;
  const lda::Options o = mh(K);
  std::vector<std::int32_t> cells(static_cast<std::size_t>(lda::topic_row_width(K)), 0);
  lda::TopicRow word(cells, K);
  for (const int k : {3, 3, 3, 0, 6, 6, 3, 1, 3, 6}) word.add(k);
  const std::vector<std::int64_t> totals{50, 7, 0, 90, 3, 12, 40};
  const auto inv = lda::coefficients(totals, o, 300);
  AliasPairing pairing;
  std::vector<double> dense(static_cast<std::size_t>(lda::dense_proposal_width(K)));
  lda::build_dense_proposal(inv.data(), K, o, dense, pairing);
  std::vector<std::int32_t> prop(static_cast<std::size_t>(lda::word_proposal_width(K)));
  lda::build_word_proposal(lda::TopicRowView(cells, K), dense.data(), K, prop, pairing);
  // q(k) = (count_k + beta) inv_k / sum, and the table's mass of k.
  double sum = 0;
  std::vector<double> want(K), got(K, 0.0);
  for (int k = 0; k < K; ++k) sum += want[static_cast<std::size_t>(k)] = (word.count(k) + o.beta) * inv[k];
  double sparse;
  std::memcpy(&sparse, &prop[K + 1], sizeof sparse);
  const std::int32_t m = prop[K];
  ASSERT_EQ(m, 4);
  for (std::int32_t i = 0; i < m; ++i) {
    const std::int32_t* e = &prop[static_cast<std::size_t>(K + 3 + 3 * i)];
    const double kept = std::bit_cast<float>(e[1]);
    got[static_cast<std::size_t>(e[0])] += sparse / (sparse + dense[K]) / m * kept;
    got[static_cast<std::size_t>(e[2])] += sparse / (sparse + dense[K]) / m * (1 - kept);
  }
  for (int i = 0; i < K; ++i) {
    const double kept = dense[static_cast<std::size_t>(K + 1 + i)];
    got[static_cast<std::size_t>(i)] += dense[K] / (sparse + dense[K]) / K * kept;
    got[static_cast<std::size_t>(dense[static_cast<std::size_t>(2 * K + 1 + i)])] +=
        dense[K] / (sparse + dense[K]) / K * (1 - kept);
  }
  for (int k = 0; k < K; ++k)
    EXPECT_NEAR(got[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)] / sum, 1e-7) << "topic " << k;
  // And draws follow it: u in (0, 1) walked finely hits each topic in proportion.
  std::vector<double> hits(K, 0.0);
  const int n = 1'000'000;
  for (int j = 0; j < n; ++j) ++hits[static_cast<std::size_t>(lda::propose_from_word(prop.data(), dense.data(), K,
                                                                                     (j + 0.5) / n))];
  for (int k = 0; k < K; ++k)
    EXPECT_NEAR(hits[static_cast<std::size_t>(k)] / n, want[static_cast<std::size_t>(k)] / sum, 1e-5) << "topic " << k;
}

// A token's chain leaves the exact conditional in place: started from draws of the
// exact conditional (with proposals built from other, stale counts), after a chain
// the topics are still distributed as the conditional says.
TEST(LdaMh, ChainsKeepTheExactConditional) {
  const int K = 6;
  lda::Options o = mh(K);
  o.mh_steps = 1;
  auto row_of = [&](std::vector<std::int32_t>& cells, std::initializer_list<int> topics) {
    cells.assign(static_cast<std::size_t>(lda::topic_row_width(K)), 0);
    lda::TopicRow r(cells, K);
    for (const int k : topics) r.add(k);
  };
  std::vector<std::int32_t> doc_cells, word_cells, stale_cells;
  row_of(doc_cells, {0, 0, 2, 5, 5, 5, 1});
  row_of(word_cells, {2, 2, 5, 4, 0});
  row_of(stale_cells, {2, 4, 4, 4, 1, 1});  // the word as the pass began: other counts
  const lda::TopicRowView doc(doc_cells, K), word(word_cells, K);
  const std::vector<std::int64_t> totals{30, 10, 25, 5, 40, 20}, stale_totals{28, 14, 25, 9, 33, 21};
  const auto inv = lda::coefficients(totals, o, 50), stale_inv = lda::coefficients(stale_totals, o, 50);
  AliasPairing pairing;
  std::vector<double> dense(static_cast<std::size_t>(lda::dense_proposal_width(K)));
  lda::build_dense_proposal(stale_inv.data(), K, o, dense, pairing);
  std::vector<std::int32_t> prop(static_cast<std::size_t>(lda::word_proposal_width(K)));
  lda::build_word_proposal(lda::TopicRowView(stale_cells, K), dense.data(), K, prop, pairing);
  std::vector<double> p(K);
  double sum = 0;
  for (int k = 0; k < K; ++k)
    sum += p[static_cast<std::size_t>(k)] = (o.alpha + doc.count(k)) * (o.beta + word.count(k)) * inv[k];
  const lda::ChainStreams chains(o.seed, 1, o.mh_steps);
  const CounterRng start(5, 6);
  const int n = 400'000;
  std::vector<double> before(K, 0.0), after(K, 0.0);
  for (int j = 0; j < n; ++j) {
    std::int32_t s = lda::draw_topic(doc, word, inv.data(), K, o, start.uniform(static_cast<std::uint64_t>(j)));
    ++before[static_cast<std::size_t>(s)];
    s = lda::mh_draw(doc, word, prop.data(), dense.data(), inv.data(), K, o, s, chains, static_cast<std::uint64_t>(j));
    ++after[static_cast<std::size_t>(s)];
  }
  for (int k = 0; k < K; ++k) {
    const double q = p[static_cast<std::size_t>(k)] / sum, sd = std::sqrt(q * (1 - q) / n);
    EXPECT_NEAR(before[static_cast<std::size_t>(k)] / n, q, 5 * sd) << "topic " << k;
    EXPECT_NEAR(after[static_cast<std::size_t>(k)] / n, q, 5 * sd) << "topic " << k;
  }
  // From a single starting topic, a long chain forgets it.
  o.mh_steps = lda::ChainStreams::kMaxSteps;
  const lda::ChainStreams long_chains(o.seed, 1, o.mh_steps);
  std::vector<double> from_three(K, 0.0);
  for (int j = 0; j < n; ++j)
    ++from_three[static_cast<std::size_t>(
        lda::mh_draw(doc, word, prop.data(), dense.data(), inv.data(), K, o, 3, long_chains,
                     static_cast<std::uint64_t>(j)))];
  for (int k = 0; k < K; ++k) {
    const double q = p[static_cast<std::size_t>(k)] / sum, sd = std::sqrt(q * (1 - q) / n);
    EXPECT_NEAR(from_three[static_cast<std::size_t>(k)] / n, q, 5 * sd + 0.002) << "topic " << k;
  }
}

// A file every rank reads (docword files are read in parallel): written once, by rank 0.
std::string write(const strata::testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  if (rt().rank() == 0) std::ofstream(path, std::ios::binary) << text;
  rt().comm().barrier();
  return path;
}

TEST(Lda, LoadsDocwordAndText) {
  strata::testing::TempDir dir("lda-load");
  write(dir, "vocab.kos.txt", "apple\nbanana\ncherry\ndate\n");
  const auto d = lda::load(rt(), write(dir, "docword.kos.txt", "3\n4\n3\n1 2 4\n3 4 1\r\n1 1 2\n"));
  EXPECT_EQ(d.docs, 3);
  EXPECT_EQ(d.words, 4);
  EXPECT_EQ(d.tokens, 7);
  ASSERT_EQ(d.entries.size(), 3u);  // by (doc, word)
  EXPECT_EQ(d.entries[1].word, 1);
  EXPECT_EQ(d.entries[1].count, 4);
  EXPECT_EQ(d.max_count, 4);
  EXPECT_EQ(d.word_name(1), "banana");

  const auto t = lda::load(rt(),
      write(dir, "text.txt",
            "The cat sat on the mat.\nA CAT and a dog!\nDogs, cats; the dog's bone\nunique words only\n"));
  // "cat" and "dog" are in two lines each; "sat", "mat", "dogs", ... in one; "the",
  // "and" are stop words; "on", "a", "s" are short. The fourth line keeps nothing.
  EXPECT_EQ(t.vocabulary, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(t.docs, 3);
  EXPECT_EQ(t.tokens, 4);

  // A text that starts with a number is still text, not a docword header.
  const auto kjv = lda::load(rt(), write(dir, "year.txt",
                                   "1611\nin the beginning of the heaven\nthe heaven and the earth\n"
                                   "the earth was without form\n"));
  EXPECT_EQ(kjv.vocabulary, (std::vector<std::string>{"heaven", "earth"}));  // by first appearance
}

TEST(Lda, BadInputNamesFileAndLine) {
  strata::testing::TempDir dir("lda-bad");
  auto expect_parse_error = [&](const std::string& name, const std::string& text, std::int64_t line) {
    const std::string path = write(dir, name, text);
    try {
      lda::load(rt(), path);
      ADD_FAILURE() << name << ": no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), path) << e.what();
      EXPECT_EQ(e.line(), line) << e.what();
      return std::string(e.what());
    }
    return std::string();
  };
  expect_parse_error("header", "3\nfour\n2\n1 1 1\n1 2 1\n", 2);
  expect_parse_error("record", "3\n4\n2\n1 1 1\n1 x 1\n", 5);
  expect_parse_error("fields", "3\n4\n2\n1 1 1\n1 2\n", 5);
  expect_parse_error("doc-range", "3\n4\n2\n1 1 1\n4 2 1\n", 5);
  expect_parse_error("zero-id", "3\n4\n1\n0 1 1\n", 4);
  expect_parse_error("word-range", "3\n4\n1\n1 5 1\n", 4);
  expect_parse_error("count", "3\n4\n1\n1 1 0\n", 4);
  expect_parse_error("too-few", "3\n4\n3\n1 1 1\n1 2 1\n", 3);
  expect_parse_error("binary", "some words here\nmore words\nbinary\0junk\n"s, 3);
  // A pair given twice was summed by the app's own reader; the library refuses it.
  const std::string repeat = expect_parse_error("repeat", "3\n4\n3\n1 2 1\n2 2 1\n1 2 5\n", 6);
  EXPECT_NE(repeat.find("index (1, 2) appears again (first on line 4)"), std::string::npos) << repeat;
  expect_parse_error("huge-count", "3\n4\n1\n1 2 2147483648\n", 4);
  EXPECT_THROW(lda::load(rt(), dir.file("missing.txt")), IoError);
  EXPECT_THROW(lda::load(rt(), write(dir, "empty.txt", "a b\nc d\n")), IoError);
  EXPECT_THROW(lda::load(rt(), dir.path().string()), IoError);  // a directory
}

// The app as the `strata` command runs it: one report per pass on every rank, the
// loss first, and a saved model that loads back.
TEST(Lda, TrainReportsEveryPassAndSavesTheModel) {
  strata::testing::TempDir dir("lda-app");
  const App& app = find_app("lda");
  RunConfig c;
  c.synthetic = app.synthetic_keys;
  c.synthetic.parse_spec("docs=100,words=200,topics=4,doclen=40");
  c.options = app.options;
  c.options.set("top-words", "3");
  c.epochs = 3;
  c.save_dir = dir.file("model");
  for (const bool serial : {false, true}) {
    c.serial = serial;
    std::vector<PassReport> reports;
    std::vector<std::string> infos;
    auto run = [&] {
      app.train(rt(), c, [&](const std::string& s) { infos.push_back(s); },
                [&](const PassReport& r) { reports.push_back(r); });
    };
    if (serial && rt().size() > 1) {
      EXPECT_THROW(run(), OptionError);
      continue;
    }
    run();
    ASSERT_EQ(reports.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(reports[static_cast<std::size_t>(i)].pass, i + 1);
      ASSERT_GE(reports[static_cast<std::size_t>(i)].metrics.size(), 2u);
      EXPECT_EQ(reports[static_cast<std::size_t>(i)].metrics[0].name, "loss");
      EXPECT_DOUBLE_EQ(reports[static_cast<std::size_t>(i)].metrics[0].value,
                       -reports[static_cast<std::size_t>(i)].metrics[1].value);
    }
    ASSERT_FALSE(infos.empty());
    EXPECT_NE(infos.back().find("topic recovery"), std::string::npos) << infos.back();
    const auto words = load_checkpoint<std::int32_t, 2>(rt(), c.save_dir + "/word_topic");
    const auto totals = load_checkpoint<std::int64_t, 1>(rt(), c.save_dir + "/topic_totals");
    EXPECT_EQ(words.extent(0), 200);
    EXPECT_EQ(words.extent(1), 4);
    std::int64_t sum = 0, total = 0;
    for (const auto v : words.gather()) sum += v;
    for (const auto v : totals.gather()) total += v;
    EXPECT_EQ(sum, total);
    EXPECT_EQ(total, reports[0].items);
  }
}

// `strata explain lda` prints the plan of both loops: the sampler's 2-D plan and
// the likelihood's 1-D one.
TEST(Lda, ExplainPrintsThePlanOfEachLoop) {
  const App& app = find_app("lda");
  RunConfig c;
  c.synthetic = app.synthetic_keys;
  c.synthetic.parse_spec("docs=50,words=100,topics=3,doclen=20");
  c.options = app.options;
  ::testing::internal::CaptureStdout();
  app.explain(rt(), c);
  const std::string out = ::testing::internal::GetCapturedStdout();
  if (rt().rank() != 0) return;
  EXPECT_NE(out.find("strategy: two_d"), std::string::npos) << out;
  EXPECT_NE(out.find("strategy: one_d"), std::string::npos) << out;
  EXPECT_NE(out.find("topic_totals"), std::string::npos) << out;
}

}  // namespace
}  // namespace strata::apps
