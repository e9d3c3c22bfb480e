// Held-out early stopping and keeping the best model (`--patience`, `--keep best`):
// which pass had the lowest held-out loss so far, and whether the last `patience`
// passes all failed to beat it.
#pragma once

#include <limits>

namespace strata::apps {

class BestPass {
 public:
  /// patience 0: never stop early.
  explicit BestPass(int patience) : patience_(patience) {}

  /// Records the next pass's held-out loss; true when it is the lowest so far.
  bool improved(double loss) {
    ++pass_;
    if (loss < best_loss_) {
      best_loss_ = loss;
      best_pass_ = pass_;
      return true;
    }
    return false;
  }
  /// Whether the last `patience` passes brought no better loss.
  bool exhausted() const { return patience_ > 0 && pass_ - best_pass_ >= patience_; }
  int best_pass() const { return best_pass_; }
  int last_pass() const { return pass_; }
  double best_loss() const { return best_loss_; }

 private:
  int patience_ = 0;
  int pass_ = 0, best_pass_ = 0;
  double best_loss_ = std::numeric_limits<double>::infinity();
};

}  // namespace strata::apps
