// The serial sparse-logistic-regression program: plain C++ over std::vector.
#pragma once

#include <vector>

#include "slr/model.hpp"
#include "slr/problem.hpp"
#include "strata/apply.hpp"

namespace strata::apps::slr {

class SerialSlr {
 public:
  SerialSlr(const Problem& problem, const Options& options);
  /// One SGD pass over the training samples in their stored order.
  void pass();
  Fit fit(const std::vector<Sample>& samples) const;
  const std::vector<float>& w() const { return w_; }

 private:
  const Problem& p_;
  Options o_;
  std::vector<float> w_;
  std::vector<apply::AdaGrad::state_type> state_;
};

}  // namespace strata::apps::slr
