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

TEST(SlrLoader, ReadsLibsvmAndNamesBadLines) {
  const auto path = (std::filesystem::temp_directory_path() / ("slr_" + std::to_string(rt().rank()) + ".svm")).string();
  std::ofstream(path) << "+1 1:0.5 7:1 # comment\n-1 2:1\n\n0 3:2\n";
  const Problem p = load_libsvm(path, 0.0, 1);
  EXPECT_EQ(p.train.size(), 3u);
  EXPECT_EQ(p.features, 7);
  EXPECT_EQ(p.train[0].nnz, 2);
  EXPECT_EQ(p.train[1].label, 0.0f);
  std::ofstream(path) << "1 1:1\n1 3:1 2:1\n";
  try {
    load_libsvm(path, 0.0, 1);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
  }
  std::ofstream(path) << "2 1:1\n";
  EXPECT_THROW(load_libsvm(path, 0.0, 1), ParseError);
  EXPECT_THROW(load_libsvm(path + ".missing", 0.0, 1), IoError);
}

}  // namespace
}  // namespace strata::apps::slr
