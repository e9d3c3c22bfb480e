// `strata mlr`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"
#include "common/relaxed_options.hpp"

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
      .declare("batch", "auto", "samples per step: their gradients summed, each row they touch stepped once (1: "
                                "plain SGD; auto: 10, or 100 when samples hold over a tenth of the features)")
      .declare("bias", "yes", "yes | no: a bias row (regularised like the weights)");
  declare_relaxed_classifier_options(
      a.options, "about 100 a pass, fewer when the rows a clock moves cost more than half the pass's computing");
  return a;
}

}  // namespace strata::apps
