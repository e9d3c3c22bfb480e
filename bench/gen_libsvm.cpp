// Writes slr's synthetic classification set as LIBSVM files: the samples `strata
// train slr --synthetic ...` generates (apps/slr/problem.hpp: power-law binary
// features, labels from a planted logistic model), split as the app splits them,
// so that liblinear, scikit-learn and `strata train slr --data` read the same data.
//
//   strata-gen-libsvm --train FILE --test FILE [--samples S] [--features F] [--nnz Z]
//                     [--holdout PERCENT] [--seed S]
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "bench_util.hpp"
#include "slr/problem.hpp"
#include "strata/error.hpp"

int main(int argc, char** argv) try {
  strata::apps::slr::SyntheticSpec spec;
  spec.samples = 1'000'000;
  spec.features = 1'000'000;
  std::int64_t holdout_percent = 10, seed = 42;
  std::string train, test;
  for (int a = 1; a < argc; ++a) {
    const std::string opt = argv[a];
    if (a + 1 >= argc) throw strata::OptionError(fmt::format("{} needs a value", opt));
    const char* v = argv[++a];
    if (opt == "--train") train = v;
    else if (opt == "--test") test = v;
    else if (opt == "--samples") spec.samples = strata::bench::number(opt, v);
    else if (opt == "--features") spec.features = strata::bench::number(opt, v);
    else if (opt == "--nnz") spec.nnz = static_cast<int>(strata::bench::number(opt, v));
    else if (opt == "--holdout") holdout_percent = strata::bench::number(opt, v);
    else if (opt == "--seed") seed = strata::bench::number(opt, v);
    else throw strata::OptionError(fmt::format("unknown option '{}'", opt));
  }
  if (train.empty() || test.empty()) throw strata::OptionError("--train FILE and --test FILE are needed");
  if (holdout_percent > 90) throw strata::OptionError("--holdout is a percentage of at most 90");
  const auto p = strata::apps::slr::generate(spec, static_cast<double>(holdout_percent) / 100,
                                             static_cast<std::uint64_t>(seed));
  strata::apps::slr::write_libsvm(p, p.train, train);
  strata::apps::slr::write_libsvm(p, p.test, test);
  std::printf("%zu training samples: %s\n%zu held out: %s\n", p.train.size(), train.c_str(), p.test.size(),
              test.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata-gen-libsvm: %s\n", e.what());
  return 2;
}
