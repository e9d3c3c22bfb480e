// The slr app: a data-parallel plan over a Buffer-served weight array, on any number
// of ranks; AdaRevision at the owners approaches the serial program's AdaGrad; bad
// LIBSVM lines name the line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "slr/serial.hpp"
#include "slr/strata.hpp"
#include "test_runtime.hpp"

namespace strata::apps::slr {
namespace {

using strata::testing::rt;

Problem small_problem() {
  SyntheticSpec s;
  s.samples = 4000;
  s.features = 2000;
  s.nnz = 20;
  return generate(s, 0.2, 3);
}

TEST(SlrApp, RunsDataParallelAndTracksTheSerialProgram) {
  const Problem p = small_problem();
  Options o;
  o.adarevision = true;
  o.lr = 0.1f;
  o.clock_every = 100;
  StrataSlr parallel(rt(), p, o);
  SerialSlr serial(p, o);
  for (int pass = 0; pass < 3; ++pass) {
    parallel.pass();
    serial.pass();
  }
  EXPECT_EQ(parallel.report().strategy, analysis::Strategy::data_parallel);
  const double a = parallel.fit_train().loss(), b = serial.fit(p.train).loss();
  EXPECT_LT(a, 0.6);  // from log 2 = 0.693 at w = 0
  // Up to 8 workers whose deltas meet every 100 samples each: measured 8 % above
  // the serial loss at 4 ranks x 2 threads, under 1 % at 2 workers.
  EXPECT_NEAR(a, b, 0.12 * b) << "strata " << a << ", serial " << b;
  EXPECT_EQ(parallel.fit_test().count, static_cast<std::int64_t>(p.test.size()));
}

TEST(SlrApp, OneWorkerWithOneClockPerSampleMatchesTheSerialProgram) {
  if (rt().size() * rt().threads() != 1) GTEST_SKIP() << "needs exactly one worker";
  const Problem p = small_problem();
  Options o;
  o.lr = 0.05f;
  o.clock_every = 1;  // every delta applied before the next sample reads
  StrataSlr parallel(rt(), p, o);
  SerialSlr serial(p, o);
  parallel.pass();
  serial.pass();
  // Equal up to rounding: a sample that holds a feature twice has its two deltas
  // summed in the buffer before the owner adds them, where the serial loop adds
  // them one at a time.
  const auto w = parallel.w().gather();
  ASSERT_EQ(w.size(), serial.w().size());
  for (std::size_t f = 0; f < w.size(); ++f) ASSERT_NEAR(w[f], serial.w()[f], 1e-5f) << "feature " << f;
}

// A file every rank reads: written once, by rank 0.
std::string write_svm(const strata::testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  if (rt().rank() == 0) std::ofstream(path) << text;
  rt().comm().barrier();
  return path;
}

std::int64_t error_line(const std::string& path) {
  try {
    load_libsvm(rt(), path, 0.0, 1);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    return e.line();
  }
  ADD_FAILURE() << path << ": no error";
  return 0;
}

TEST(SlrLoader, ReadsLibsvmAndNamesBadLines) {
  strata::testing::TempDir dir("slr-load");
  const auto path = write_svm(dir, "a.svm", "+1 1:0.5 7:1 # comment\n-1 2:1\n\n0 3:2\n");
  const Problem p = load_libsvm(rt(), path, 0.0, 1);
  EXPECT_EQ(p.train.size(), 3u);
  EXPECT_EQ(p.features, 7);
  EXPECT_EQ(p.train[0].nnz, 2);
  EXPECT_EQ(p.train[0].label, 1.0f);
  EXPECT_EQ(p.train[1].label, 0.0f);
  EXPECT_EQ(p.train[2].label, 0.0f);
  EXPECT_EQ(p.feature, (std::vector<std::int32_t>{0, 6, 1, 2}));
  EXPECT_EQ(p.value, (std::vector<float>{0.5f, 1, 1, 2}));
  EXPECT_EQ(error_line(write_svm(dir, "b.svm", "1 1:1\n1 3:1 2:1\n")), 2);
  EXPECT_EQ(error_line(write_svm(dir, "c.svm", "1 1:1\n2 1:1\n")), 2);  // not a class
  EXPECT_EQ(error_line(write_svm(dir, "d.svm", "1 1:1\n1 2147483648:1\n")), 2);
  EXPECT_EQ(error_line(write_svm(dir, "e.svm", "# no samples\n")), 1);
  EXPECT_THROW(load_libsvm(rt(), path + ".missing", 0.0, 1), IoError);
}

// The command refused the ranking data sets' "qid:" tokens, which the library reads.
TEST(SlrLoader, ReadsQueryIdsAsTheLibraryDoes) {
  strata::testing::TempDir dir("slr-qid");
  const Problem p = load_libsvm(rt(), write_svm(dir, "q.svm", "1 qid:3 1:1 4:2\n-1 qid:3 2:1\n+1 qid:4 4:1\n"), 0.0, 1);
  ASSERT_EQ(p.train.size(), 3u);
  EXPECT_EQ(p.features, 4);
  EXPECT_EQ(p.feature, (std::vector<std::int32_t>{0, 3, 1, 3}));
}

}  // namespace
}  // namespace strata::apps::slr
