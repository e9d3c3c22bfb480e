// What `strata train mf --save DIR` writes besides the factors (checkpoints W and H),
// so that `strata predict mf --model DIR` can map a file's ids to the model's rows
// and knows which loss, and so which measure, the model was trained for:
//   DIR/mf.txt         "strata mf model", then "rank K", "loss NAME", "users N", "items M"
//   DIR/user_ids.txt   the training data's distinct user ids, increasing, one a line
//   DIR/item_ids.txt   (both absent when ids were used as rows: generated data)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mf/model.hpp"
#include "mf/problem.hpp"

namespace strata::apps::mf {

struct ModelInfo {
  int rank = 0;
  Loss loss = Loss::squared;
  std::int64_t users = 0, items = 0;
  std::vector<std::int64_t> user_ids, item_ids;  ///< as Problem's (empty: ids are rows)
};

const char* loss_name(Loss loss);
/// The loss called `name`; OptionError naming `option` and the known names otherwise.
Loss parse_loss(const std::string& name, const std::string& option);

/// Writes mf.txt and the id files into `dir` (which must exist). Call on one rank.
void write_model_info(const std::string& dir, const Problem& p, const Options& o);
/// Reads them back; IoError when missing, ParseError naming the file and line when malformed.
ModelInfo read_model_info(const std::string& dir);

}  // namespace strata::apps::mf
