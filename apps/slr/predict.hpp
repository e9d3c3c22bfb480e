// `strata predict slr`: liblinear's `predict -b 1` over a model `strata train slr
// --save DIR` wrote (DIR/model.liblinear) or liblinear's `train -s 0` wrote.
#pragma once

#include "common/app.hpp"

namespace strata::apps::slr {

/// Reads req.data_path (LIBSVM) and writes, as liblinear's `predict -b 1` does, a
/// "labels P N" line and then per sample its predicted label and the two classes'
/// probabilities; reports accuracy and log-loss through `info`. --model is a
/// directory holding model.liblinear or such a file itself. Collective.
void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info);

}  // namespace strata::apps::slr
