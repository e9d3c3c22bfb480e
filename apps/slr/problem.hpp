// Sparse logistic regression's data, shared by the serial program and its Strata
// twin: samples as runs of (feature, value) pairs with a 0/1 label, a generator
// from a planted logistic model, a LIBSVM loader, and the quality measures.
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

namespace strata::apps::slr {

/// One sample: features[begin, begin + nnz) of the problem, and its label.
struct Sample {
  std::int64_t begin = 0;
  std::int32_t nnz = 0;
  float label = 0;  ///< 0 or 1
};

struct Problem {
  std::int64_t features = 0;
  std::vector<Sample> train, test;
  std::vector<std::int32_t> feature;  ///< feature ids of all samples
  std::vector<float> value;           ///< their values
  std::string source;
  /// How the data spell class 0: "0" when a LIBSVM file's negative labels are 0, else "-1".
  std::string negative_label = "-1";
};

struct SyntheticSpec {
  std::int64_t samples = 100'000, features = 100'000;
  int nnz = 50;  ///< non-zeros per sample, about (nnz-10 .. nnz+10)
};

/// Sample i has about spec.nnz binary features drawn log-uniformly from [0, F) (a
/// power law: feature f is seen with frequency about 1/(f+1)); its label is drawn
/// from a logistic model with standard-normal weights. Every rank generates the
/// same data. A fraction `holdout` of the samples (by a hash of the index) is held out.
Problem generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed);

/// Reads a LIBSVM file with the library's CSR loader (strata::load_libsvm_rows: "label [qid:q]
/// index:value ..." lines, 1-based feature ids increasing within a line, '#'
/// comments) in parallel; every rank ends with the whole problem. Labels are those of
/// binary classification, -1 or 0 (class 0) and 1 or +1 (class 1); feature ids at
/// most 2^31 - 1. ParseError names the file and line. Collective.
Problem load_libsvm(Runtime& rt, const std::string& path, double holdout, std::uint64_t seed);

/// Makes every sample of `test` (a problem read from `path`) a held-out sample of p,
/// its features appended to p's; p.features grows to cover test's.
void attach_test(Problem& p, const Problem& test, const std::string& path);

/// Writes samples of p as LIBSVM lines ("+1 3:1 17:0.5", labels +1 and -1, feature ids
/// 1-based and increasing, a feature a sample holds twice written once with the values
/// summed), as liblinear reads them. IoError naming the path.
void write_libsvm(const Problem& p, const std::vector<Sample>& samples, const std::string& path);

inline float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }

/// Log-loss and accuracy over a set of samples.
using Fit = ClassifierFit;

/// One sample's share of Fit: p is the predicted probability of label 1.
inline void measure(float p, float label, double& log_loss, std::int64_t& correct) {
  const double q = std::min(std::max(static_cast<double>(p), 1e-7), 1 - 1e-7);
  log_loss += label > 0.5f ? -std::log(q) : -std::log(1 - q);
  correct += (p >= 0.5f) == (label > 0.5f);
}

}  // namespace strata::apps::slr
