// Sparse logistic regression's options and update rule, shared by the serial
// program and its Strata twin.
#pragma once

#include <cstdint>

namespace strata::apps::slr {

struct Options {
  float lr = 0.1f;             ///< step size (plain) or AdaGrad/AdaRevision base rate
  bool adarevision = false;    ///< AdaRevision at the owners (serial: AdaGrad, the same rule without delay)
  int staleness = 0;           ///< SSP bound (0: BSP)
  std::int64_t clock_every = 1000;  ///< iterations of a worker per clock
};

}  // namespace strata::apps::slr
