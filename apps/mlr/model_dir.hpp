// What `strata train mlr --save DIR` writes besides the weights' checkpoint (DIR/W):
// DIR/mlr.txt, the model's shape and its classes' labels, which `strata predict mlr`
// needs to read the weights back.
//
//   features 784
//   bias 1
//   labels 0 1 2 3 4 5 6 7 8 9
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::apps::mlr {

struct ModelInfo {
  std::int64_t features = 0;
  bool bias = true;
  std::vector<float> labels;  ///< class c's label, in the weights' column order
  std::int64_t rows() const { return features + (bias ? 1 : 0); }
};

/// Writes DIR/mlr.txt. IoError naming the file.
void write_model_info(const std::string& dir, const ModelInfo& m);
/// Reads DIR/mlr.txt: IoError when missing, ParseError naming the line when malformed.
ModelInfo read_model_info(const std::string& dir);

}  // namespace strata::apps::mlr
