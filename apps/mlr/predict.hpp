// `strata predict mlr`: liblinear's `predict -b 1` output over a model `strata train
// mlr --save DIR` wrote.
#pragma once

#include "common/app.hpp"

namespace strata::apps::mlr {

/// Reads req.data_path (LIBSVM) and writes, as liblinear's `predict -b 1` does, a
/// "labels L1 L2 ..." line (the model's classes) and then per sample its predicted
/// label and every class's probability; reports accuracy and log-loss through
/// `info` (a label the model does not know counts as wrong, at probability 1e-7).
/// Collective.
void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info);

}  // namespace strata::apps::mlr
