#include "slr/predict.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "slr/model_file.hpp"
#include "slr/problem.hpp"
#include "strata/error.hpp"

namespace strata::apps::slr {

void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info) {
  const std::filesystem::path dir(req.model_dir);
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec))
    throw IoError(fmt::format("--model: '{}' is neither a directory holding model.liblinear nor a liblinear model file",
                              req.model_dir));
  const LinearModel m = read_liblinear_model(
      std::filesystem::is_directory(dir, ec) ? (dir / "model.liblinear").string() : req.model_dir);
  const Problem p = load_libsvm(rt, req.data_path, 0.0, 0);  // every sample, in file order
  if (rt.rank() != 0) return;
  std::FILE* out = std::fopen(req.out_path.c_str(), "w");
  if (!out) throw IoError(fmt::format("--out: cannot write '{}'", req.out_path));
  std::fprintf(out, "labels %s %s\n", m.positive.c_str(), m.negative.c_str());
  Fit fit;
  const auto features = static_cast<std::int64_t>(m.w.size());
  for (const Sample& s : p.train) {
    float z = m.bias >= 0 ? m.bias_weight * m.bias : 0.0f;
    for (std::int64_t k = s.begin; k < s.begin + s.nnz; ++k) {
      const std::int32_t f = p.feature[static_cast<std::size_t>(k)];
      // An id beyond the model's features has no weight: skipped, as liblinear skips it.
      if (f < features) z += m.w[static_cast<std::size_t>(f)] * p.value[static_cast<std::size_t>(k)];
    }
    const float q = sigmoid(z);
    std::fprintf(out, "%s %.6g %.6g\n", (q >= 0.5f ? m.positive : m.negative).c_str(), static_cast<double>(q),
                 1.0 - static_cast<double>(q));
    measure(q, s.label, fit.log_loss, fit.correct);
  }
  fit.count = static_cast<std::int64_t>(p.train.size());
  if (std::fclose(out) != 0) throw IoError(fmt::format("--out: error writing '{}'", req.out_path));
  info(fmt::format("{} predictions: {}; accuracy {:.6f}, log-loss {:.6f}", fit.count, req.out_path, fit.accuracy(),
                   fit.loss()));
}

}  // namespace strata::apps::slr
