// The serial TransE program: plain C++ over std::vector.
#pragma once

#include <vector>

#include "transe/model.hpp"
#include "transe/problem.hpp"

namespace strata::apps::transe {

class SerialTranse {
 public:
  SerialTranse(const Graph& graph, const Options& options);
  /// One pass over the training triples in their stored order; returns the pass's own
  /// fit: each triple's margin loss just before its step.
  Fit pass();
  /// The held-out triples' ranks.
  Ranks rank_test() const;
  /// The entity rows and the relation rows, row-major (dim each).
  const std::vector<float>& entities() const { return e_; }
  const std::vector<float>& relations() const { return r_; }

 private:
  float* row(int table, std::int32_t id) {
    return (table == 0 ? e_ : r_).data() + static_cast<std::size_t>(id) * dim_;
  }

  const Graph& g_;
  Options o_;
  std::size_t dim_;
  std::vector<Batch> batches_;
  std::vector<float> e_, r_;
  int pass_ = 0;
};

}  // namespace strata::apps::transe
