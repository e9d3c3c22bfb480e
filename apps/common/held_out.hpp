// Held-out data in a classifier's training (slr, mlr): when to stop (--patience) and
// which pass's model --save writes (--keep best | last), from each pass's held-out
// log-loss, the report's third metric.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/best_pass.hpp"
#include "common/classifier_fit.hpp"
#include "strata/error.hpp"

namespace strata::apps {

// What the held-out data decide: when to stop (--patience) and which pass's model
// --save writes (--keep best: the lowest held-out loss; last). Passes a resumed run
// restored from a checkpoint do not count: their models are not in the checkpoint.
struct HeldOut {
  BestPass best;
  bool keep_best;
  std::vector<float> kept;  // the best pass's weights (--keep best with --save)

  HeldOut(const RunConfig& c, bool has_test)
      : best(static_cast<int>(c.options.integer("patience", 0, 1'000'000))),
        keep_best(c.options.choice("keep", {"best", "last"}) == "best" && has_test && !c.save_dir.empty()) {
    if (!has_test && c.options.text("patience") != "0")
      throw OptionError(
          "--patience stops on the held-out loss, and there is no held-out data: give --holdout or --test");
  }
  // After each pass's report: `weights` gives the model (collective). True: stop.
  template <class Weights>
  bool after(const PassReport& r, Weights&& weights) {
    if (!r.restored && best.improved(r.pass, r.metrics[2].value) && keep_best) kept = weights();
    return best.exhausted();
  }
  std::string describe() const {
    std::string line = fmt::format("kept pass {}'s model, the lowest held-out log-loss ({:.6f}) of passes {} to {}",
                                   best.best_pass(), best.best_loss(), best.first_pass(), best.last_pass());
    if (best.first_pass() > 1) line += " (the passes before were restored from the checkpoint, without their models)";
    return line;
  }
  /// After the last pass: says whether training stopped early and which pass's model
  /// was kept, and returns the model --save writes: the kept one, else `last` (--keep
  /// last, no held-out data, or every pass restored from a checkpoint).
  std::vector<float> finish(const InfoCallback& info, std::vector<float> last) {
    if (best.exhausted())
      info(fmt::format("stopped after pass {}: no lower held-out log-loss in {} passes", best.last_pass(),
                       best.last_pass() - best.best_pass()));
    if (kept.empty()) return last;
    info(describe());
    return std::move(kept);
  }
};

/// A classifier's pass metrics, training figures first (the loss is the one plotted):
/// the pass's own, each sample's log-loss just before its step (progressive
/// validation, as LIBMF reports its training loss), so measuring them costs no second
/// pass over the training set; then the held-out ones, which HeldOut reads.
inline std::vector<Metric> classifier_metrics(const ClassifierFit& train, const ClassifierFit& test) {
  return {{"loss", train.loss()}, {"accuracy", train.accuracy()}, {"test_loss", test.loss()},
          {"test_accuracy", test.accuracy()}};
}

}  // namespace strata::apps
