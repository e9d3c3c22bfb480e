// Writes slr's or mlr's synthetic classification set as LIBSVM files: the samples
// `strata train slr|mlr --synthetic ...` generates (apps/slr/problem.hpp: power-law
// binary features, labels from a planted logistic model; apps/mlr/problem.hpp: many
// classes from planted prototypes), split as the app splits them, so that
// liblinear, scikit-learn and `strata train --data` read the same data.
//
//   strata-gen-libsvm --train FILE --test FILE [--app slr|mlr] [--samples S]
//                     [--features F] [--nnz Z] [--classes C] [--holdout PERCENT] [--seed S]
// (mlr's defaults: 100 classes; --classes is mlr's only.)
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "bench_util.hpp"
#include "mlr/problem.hpp"
#include "slr/problem.hpp"
#include "strata/error.hpp"

int main(int argc, char** argv) try {
  strata::apps::slr::SyntheticSpec spec;
  spec.samples = 1'000'000;
  spec.features = 1'000'000;
  std::int64_t holdout_percent = 10, seed = 42, classes = 100;
  std::string train, test, app = "slr";
  strata::bench::for_each_option(argc, argv, [&](const std::string& opt, const char* v) {
    if (opt == "--train") train = v;
    else if (opt == "--test") test = v;
    else if (opt == "--app") app = v;
    else if (opt == "--classes") classes = strata::bench::number(opt, v);
    else if (opt == "--samples") spec.samples = strata::bench::number(opt, v);
    else if (opt == "--features") spec.features = strata::bench::number(opt, v);
    else if (opt == "--nnz") spec.nnz = static_cast<int>(strata::bench::number(opt, v));
    else if (opt == "--holdout") holdout_percent = strata::bench::number(opt, v);
    else if (opt == "--seed") seed = strata::bench::number(opt, v);
    else throw strata::OptionError(fmt::format("unknown option '{}'", opt));
  });
  if (train.empty() || test.empty()) throw strata::OptionError("--train FILE and --test FILE are needed");
  if (holdout_percent > 90) throw strata::OptionError("--holdout is a percentage of at most 90");
  if (app != "slr" && app != "mlr") throw strata::OptionError(fmt::format("--app '{}': slr or mlr", app));
  const double holdout = static_cast<double>(holdout_percent) / 100;
  std::size_t n_train = 0, n_test = 0;
  if (app == "slr") {
    const auto p = strata::apps::slr::generate(spec, holdout, static_cast<std::uint64_t>(seed));
    strata::apps::slr::write_libsvm(p, p.train, train);
    strata::apps::slr::write_libsvm(p, p.test, test);
    n_train = p.train.size(), n_test = p.test.size();
  } else {
    strata::apps::mlr::SyntheticSpec m;
    m.samples = spec.samples, m.features = spec.features, m.nnz = spec.nnz;
    m.classes = static_cast<std::int32_t>(classes);
    if (classes < 2 || classes > m.features) throw strata::OptionError("--classes: from 2 to --features");
    const auto p = strata::apps::mlr::generate(m, holdout, static_cast<std::uint64_t>(seed));
    strata::apps::mlr::write_libsvm(p, p.train, train);
    strata::apps::mlr::write_libsvm(p, p.test, test);
    n_train = p.train.size(), n_test = p.test.size();
  }
  std::printf("%zu training samples: %s\n%zu held out: %s\n", n_train, train.c_str(), n_test, test.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-gen-libsvm: %s\n", e.what());
  return 2;
}
