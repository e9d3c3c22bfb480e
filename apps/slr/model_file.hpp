// slr's model in liblinear's text format (what `train -s 0` writes and `predict`
// reads), so a model trained by either tool is used by the other.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace strata::apps::slr {

/// A binary logistic-regression model: P(positive | x) = sigmoid(w . x + bias_weight * bias).
struct LinearModel {
  std::vector<float> w;          ///< one per feature (feature id k + 1 of a LIBSVM file is w[k])
  float bias = -1;               ///< the bias feature's value (liblinear's -B); < 0: no bias
  float bias_weight = 0;
  std::string positive = "1", negative = "-1";  ///< the classes' labels, as the data spell them
  std::string solver = "L2R_LR";
};

/// `m` in liblinear's format (weights to 9 significant digits: a float exactly).
std::string format_liblinear_model(const LinearModel& m);
/// Writes it to `path`. IoError naming the path.
void write_liblinear_model(const std::string& path, const LinearModel& m);

/// Reads a two-class logistic-regression model in liblinear's format (solver_type
/// L2R_LR, L1R_LR or L2R_LR_DUAL, nr_class 2, labels 1 or +1 and -1 or 0, either
/// first). ParseError naming the file and line.
LinearModel read_liblinear_model(const std::string& path);
/// The same from a stream; `path` names it in errors.
LinearModel parse_liblinear_model(std::istream& in, const std::string& path);

}  // namespace strata::apps::slr
