// GoogleTest main shared by every test binary: one strata::Runtime for the whole
// process (MPI may be initialised only once). Under mpirun every rank runs every
// test; a failure on any rank makes that rank, and so mpirun, exit non-zero.
#include <gtest/gtest.h>

#include "strata/runtime.hpp"
#include "test_runtime.hpp"

namespace strata::testing {
Runtime* g_runtime = nullptr;
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Tests wait at most 30 s in any collective, so a broken test fails instead of hanging.
  strata::RuntimeOptions defaults;
  defaults.timeout_seconds = 30;
  defaults.threads = 2;
  defaults.log_level = strata::LogLevel::warn;
  strata::Runtime rt(argc, argv, defaults);
  strata::testing::g_runtime = &rt;
  if (rt.rank() != 0) {
    // Only rank 0 prints progress; other ranks still report their failures.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new strata::testing::FailurePrinter(rt.rank()));
  }
  int rc = RUN_ALL_TESTS();
  // Every rank learns whether any rank failed, so the exit status is the job's.
  rc = rt.comm().allreduce(rc, strata::ReduceOp::max);
  return rc;
}
