// Held-out early stopping and keeping the best model (`--patience`, `--keep best`):
// which pass had the lowest held-out loss so far, and whether the last `patience`
// passes all failed to beat it.
#pragma once

#include <algorithm>
#include <limits>

namespace strata::apps {

class BestPass {
 public:
  /// patience 0: never stop early.
  explicit BestPass(int patience) : patience_(patience) {}

  /// Records pass `pass`'s held-out loss (passes in increasing order; one that is not
  /// recorded, as a restored one, does not count); true when it is the lowest so far.
  bool improved(int pass, double loss) {
    if (counted_ == 0) first_pass_ = pass;
    ++counted_;
    pass_ = pass;
    if (loss < best_loss_) {
      best_loss_ = loss;
      best_pass_ = pass;
      return true;
    }
    return false;
  }
  /// Whether the last `patience` recorded passes brought no better loss.
  bool exhausted() const {
    return patience_ > 0 && counted_ > 0 && pass_ - std::max(best_pass_, first_pass_ - 1) >= patience_;
  }
  int best_pass() const { return best_pass_; }
  int first_pass() const { return first_pass_; }
  int last_pass() const { return pass_; }
  double best_loss() const { return best_loss_; }

 private:
  int patience_ = 0;
  int counted_ = 0, first_pass_ = 0, pass_ = 0, best_pass_ = 0;
  double best_loss_ = std::numeric_limits<double>::infinity();
};

}  // namespace strata::apps
