// How well a classifier (slr, mlr) fits a set of samples: summed log-loss and the
// count of correct predictions, over `count` samples.
#pragma once

#include <cstdint>

namespace strata::apps {

struct ClassifierFit {
  double log_loss = 0;
  std::int64_t correct = 0, count = 0;
  double loss() const { return count ? log_loss / static_cast<double>(count) : 0.0; }
  double accuracy() const { return count ? static_cast<double>(correct) / static_cast<double>(count) : 0.0; }
};

}  // namespace strata::apps
