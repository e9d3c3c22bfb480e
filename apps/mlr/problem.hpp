// Multinomial logistic regression's data, shared by the serial program and its
// Strata twin: samples as runs of (feature, value) pairs with a class, a generator of
// many-class sparse data from planted class prototypes, a LIBSVM loader, and the
// quality measures (held-out log-loss and accuracy).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/classifier_fit.hpp"

namespace strata {
class Runtime;
}

namespace strata::apps::mlr {

/// One sample: features[begin, begin + nnz) of the problem, and its class.
struct Sample {
  std::int64_t begin = 0;
  std::int32_t nnz = 0;
  std::int32_t label = 0;  ///< the class, 0 .. classes - 1
};

struct Problem {
  std::int64_t features = 0;
  std::int32_t classes = 0;
  std::vector<Sample> train, test;
  std::vector<std::int32_t> feature;  ///< feature ids of all samples
  std::vector<float> value;           ///< their values
  /// Class c's label as the data spell it (LIBSVM files: the sorted distinct labels
  /// of the training and test files; generated data: c).
  std::vector<float> class_label;
  std::string source;
};

struct SyntheticSpec {
  std::int64_t samples = 100'000, features = 10'000;
  std::int32_t classes = 100;
  int nnz = 30;          ///< non-zeros per sample, about (nnz-5 .. nnz+5)
  double signal = 0.3;   ///< the share of a sample's features drawn from its class's own
  double noise = 0.05;   ///< the share of samples whose label is replaced by a random class
};

/// Planted prototypes: feature f belongs to class f % classes. A sample of class y
/// (uniform) draws each of its binary features, with probability `signal`, from
/// y's own features (log-uniformly, so some are frequent), else from all features
/// (log-uniformly: a power law, as words are); a share `noise` of the labels is then
/// replaced by a uniform class, which bounds the best accuracy near 1 - noise.
/// Every rank generates the same data; a fraction `holdout` of the samples (by a
/// hash of the index) is held out.
Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed);

/// Reads a LIBSVM file with the library's CSR loader (labels any numbers, one class
/// per distinct label) in parallel; every rank ends with the whole problem.
/// ParseError names the file and line; more than `max_classes` distinct labels is a
/// ParseError too (a regression file, most likely). Collective.
Problem load_libsvm(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed,
                    std::int32_t max_classes = 100'000);

/// Makes every sample of `test` (a problem read from `path`) a held-out sample of p,
/// its features appended to p's. The classes become the union of both files'
/// labels, sorted, and both problems' samples are renumbered to them (a class seen
/// only in the test file is one the model never predicts).
void attach_test(Problem& p, const Problem& test, const std::string& path);

/// Writes samples of p as LIBSVM lines (the class's label, then the features as
/// liblinear reads them). IoError naming the path.
void write_libsvm(const Problem& p, const std::vector<Sample>& samples, const std::string& path);

/// The non-zeros of p's training samples (what the automatic batch and clock weigh).
inline std::int64_t train_nonzeros(const Problem& p) {
  std::int64_t n = 0;
  for (const Sample& s : p.train) n += s.nnz;
  return n;
}

/// Log-loss and accuracy over a set of samples.
using Fit = ClassifierFit;

/// One sample's share of Fit: p is the predicted probability of its own class,
/// hit whether the predicted class is its own.
inline void measure(float p, bool hit, double& log_loss, std::int64_t& correct) {
  log_loss += -std::log(std::max(static_cast<double>(p), 1e-7));
  correct += hit;
}

}  // namespace strata::apps::mlr
