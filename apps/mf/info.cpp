// `strata mf`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"

namespace strata::apps {

AppInfo mf_info() {
  AppInfo a;
  a.name = "mf";
  a.summary = "matrix factorisation by SGD (LIBMF's losses, L1/L2, NMF); expected plan: 2-D rotation";
  a.unit = "ratings";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("users", "50000", "users")
      .declare("items", "5000", "items")
      .declare("ratings", "1000000", "ratings (distinct user-item pairs)")
      .declare("rank", "5", "rank of the planted model");
  a.options.declare("rank", "64", "factors per user and item (K)")
      .declare("loss", "squared", "squared | absolute (real ratings) | logistic | hinge (binary: rating > 0 or not)")
      .declare("step", "rows",
               "rows (LIBMF's: a step size per part of a row, a first pass on 4 factors) | plain | adagrad (per element)")
      .declare("lr", "0.1", "step size (rows, adagrad: base rate)")
      .declare("l2", "0.02", "L2 weight, or USER,ITEM weights (LIBMF: -l2 P,Q)")
      .declare("l1", "0", "L1 weight, or USER,ITEM weights (LIBMF: -l1 P,Q)")
      .declare("nmf", "no", "yes (or --nmf alone): non-negative factors")
      .declare("holdout", "0.1", "fraction of ratings held out for the test metric")
      .declare("test", "", "FILE: measure each pass on FILE's ratings instead (LIBMF's -p); all of --data trains")
      .declare("folds", "0", "K >= 2: K-fold cross-validation, reporting the mean held-out metric (LIBMF: -v)")
      .declare("order", "key", "key | shuffled: order of ratings inside a block (Strata)")
      .declare("rounds", "0", "2-D plan: times the item blocks go round the workers per pass (0: Strata's choice)")
      .declare("slices", "0", "2-D plan: slices of each worker's users, one per round in turn (0: Strata's choice)")
      .declare("clock", "1000", "data-parallel plan: iterations per worker between BSP clocks");
  return a;
}

}  // namespace strata::apps
