// `strata slr`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"
#include "common/relaxed_options.hpp"

namespace strata::apps {

AppInfo slr_info() {
  AppInfo a;
  a.name = "slr";
  a.summary = "sparse logistic regression (FTRL, AdaGrad, AdaRevision or SGD; L1/L2) through Buffers; expected plan: "
              "data-parallel 1-D";
  a.unit = "samples";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("samples", "100000", "samples")
      .declare("features", "100000", "features")
      .declare("nnz", "50", "non-zeros per sample (about)");
  a.options.declare("step", "ftrl", "ftrl | adagrad | adarevision | plain")
      .declare("lr", "0.1", "step size (plain), base rate (adagrad, adarevision), alpha (ftrl)")
      .declare("beta", "1", "FTRL's beta: a new feature's rate is lr / beta")
      .declare("l1", "0", "L1 weight (elastic net with --l2), applied to the features a sample holds")
      .declare("l2", "0", "L2 weight, applied to the features a sample holds")
      .declare("bias", "yes", "yes | no: an intercept (regularised like the weights, as liblinear's -B 1)");
  declare_relaxed_classifier_options(a.options, "about 100 a pass, at most 1000 apart");
  return a;
}

}  // namespace strata::apps
