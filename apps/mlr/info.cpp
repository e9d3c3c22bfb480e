// `strata mlr`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"

namespace strata::apps {

AppInfo mlr_info() {
  AppInfo a;
  a.name = "mlr";
  a.summary = "multinomial logistic regression (softmax; per-row AdaGrad or SGD; L2) through Buffers, a row of "
              "class weights per feature; expected plan: data-parallel 1-D";
  a.unit = "samples";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("samples", "100000", "samples")
      .declare("features", "10000", "features")
      .declare("classes", "100", "classes (each owns the features f with f % classes == class)")
      .declare("nnz", "30", "non-zeros per sample (about)")
      .declare("signal", "0.3", "share of a sample's features drawn from its class's own")
      .declare("noise", "0.05", "share of samples whose label is replaced by a random class");
  a.options.declare("step", "adagrad", "adagrad (one rate per feature row, as LIBMF's) | plain")
      .declare("lr", "0.1", "step size (plain), base rate (adagrad)")
      .declare("l2", "0", "L2 weight, applied to the rows a sample touches")
      .declare("batch", "10", "samples per step: their gradients summed, each row they touch stepped once (1: "
                              "plain SGD; dense features on several threads want 10 or more)")
      .declare("bias", "yes", "yes | no: a bias row (regularised like the weights)")
      .declare("consistency", "hybrid", "hybrid (lock-free inside a rank) | ssp (--staleness)")
      .declare("staleness", "0", "SSP staleness bound (0: BSP; with --consistency ssp)")
      .declare("clock", "auto", "samples per worker between clocks (0: one clock per pass; auto: 0 on one rank "
                                  "under Hybrid, else about 100 a pass, at most 1000 apart)")
      .declare("holdout", "0.1", "fraction of samples held out")
      .declare("test", "", "a LIBSVM file to measure on instead of --holdout")
      .declare("patience", "0", "stop after this many passes without a lower held-out log-loss (0: never)")
      .declare("keep", "best", "best | last: which pass's model --save writes");
  return a;
}

}  // namespace strata::apps
