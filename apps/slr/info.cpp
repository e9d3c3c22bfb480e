// `strata slr`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"

namespace strata::apps {

AppInfo slr_info() {
  AppInfo a;
  a.name = "slr";
  a.summary = "sparse logistic regression by SGD, weights through a Buffer; expected plan: data-parallel 1-D";
  a.unit = "samples";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("samples", "100000", "samples")
      .declare("features", "100000", "features")
      .declare("nnz", "50", "non-zeros per sample (about)");
  a.options.declare("step", "adarevision", "adarevision | plain")
      .declare("lr", "0.1", "step size (AdaRevision: base rate)")
      .declare("staleness", "0", "SSP staleness bound (0: BSP)")
      .declare("clock", "1000", "iterations per worker between clocks (0: one clock per pass)")
      .declare("holdout", "0.1", "fraction of samples held out");
  return a;
}

}  // namespace strata::apps
