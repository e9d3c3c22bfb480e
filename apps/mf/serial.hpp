// The serial matrix-factorisation program: plain C++ over std::vector.
#pragma once

#include <vector>

#include "mf/model.hpp"
#include "mf/problem.hpp"

namespace strata::apps::mf {

class SerialMf {
 public:
  SerialMf(const Problem& problem, const Options& options);
  /// One SGD pass over the training ratings in their stored order. Returns the sum
  /// of their losses, each taken just before its step (LIBMF's training figure).
  double pass();
  /// One pass in a given order (a Strata plan's equivalent order, for comparisons).
  double pass(const std::vector<Rating>& order);
  Fit fit(const std::vector<Rating>& ratings) const;
  const std::vector<float>& W() const { return W_; }  ///< users x rank, row-major
  const std::vector<float>& H() const { return H_; }  ///< items x rank, row-major

 private:
  const Problem& p_;
  Options o_;
  int passes_ = 0;  ///< passes run (the first of the rows step is a warm-up)
  std::vector<float> W_, H_, GW_, GH_;
};

}  // namespace strata::apps::mf
