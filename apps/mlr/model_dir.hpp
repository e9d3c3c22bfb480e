// What `strata train mlr --save DIR` writes besides the weights' checkpoint (DIR/W):
// DIR/mlr.txt, the model's shape and its classes' labels, which `strata predict mlr`
// needs to read the weights back.
//
//   features 784
//   bias 1
//   labels 0 1 2 3 4 5 6 7 8 9
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace strata::apps::mlr {

struct ModelInfo {
  std::int64_t features = 0;
  bool bias = true;
  std::vector<float> labels;  ///< class c's label, in the weights' column order
  std::int64_t rows() const { return features + (bias ? 1 : 0); }
};

/// mlr.txt's text for m.
std::string format_model_info(const ModelInfo& m);
/// Parses mlr.txt's text (`path` names it in errors): ParseError naming the line when
/// a key is unknown, repeated or missing, a value malformed, the features outside
/// [0, 2^31 - 1) or the labels fewer than two or not distinct.
ModelInfo parse_model_info(std::istream& in, const std::string& path);
/// Writes DIR/mlr.txt. IoError naming the file.
void write_model_info(const std::string& dir, const ModelInfo& m);
/// Reads DIR/mlr.txt: IoError when missing, ParseError as parse_model_info says.
ModelInfo read_model_info(const std::string& dir);

}  // namespace strata::apps::mlr
