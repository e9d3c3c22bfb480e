// `strata predict mf`: LIBMF's mf-predict over a model `strata train mf --save` wrote.
#pragma once

#include "common/app.hpp"

namespace strata::apps::mf {

/// Writes <w_user, h_item> for each line of req.data_path to req.out_path, in order,
/// and through `info` the measure of the model's loss when the lines carry ratings.
/// ParseError naming the file and line for a malformed line or an id the model
/// lacks; IoError / CheckpointError naming --model or --out. Collective.
void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info);

}  // namespace strata::apps::mf
