#include "mlr/predict.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "mlr/model.hpp"
#include "mlr/model_dir.hpp"
#include "mlr/problem.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps::mlr {

void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info) {
  const ModelInfo m = read_model_info(req.model_dir);
  const auto k = static_cast<std::int64_t>(m.labels.size());
  const auto W = load_checkpoint<float, 2>(rt, std::filesystem::path(req.model_dir) / "W");
  if (W.shape()[0] != m.rows() || W.shape()[1] != k)
    throw CheckpointError(fmt::format("--model: {}/W holds a {} x {} array; mlr.txt says {} x {}", req.model_dir,
                                      W.shape()[0], W.shape()[1], m.rows(), k));
  const std::vector<float> w = W.gather();
  const Problem p = load_libsvm(rt, req.data_path, 0.0, 0);  // every sample, in file order
  if (rt.rank() != 0) return;
  std::FILE* out = std::fopen(req.out_path.c_str(), "w");
  if (!out) throw IoError(fmt::format("--out: cannot write '{}'", req.out_path));
  std::string line = "labels";
  for (float l : m.labels) fmt::format_to(std::back_inserter(line), " {}", l);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out);
  const auto row = [&](std::int64_t r) { return std::span<const float>(w.data() + r * k, static_cast<std::size_t>(k)); };
  std::vector<float> z(static_cast<std::size_t>(k));
  Fit fit;
  for (const Sample& s : p.train) {
    std::fill(z.begin(), z.end(), 0.0f);
    if (m.bias) add_scaled(z.data(), row(m.features), 1.0f);
    for (std::int64_t j = s.begin; j < s.begin + s.nnz; ++j) {
      const std::int32_t f = p.feature[static_cast<std::size_t>(j)];
      // An id beyond the model's features has no weights: skipped, as liblinear skips it.
      if (f < m.features) add_scaled(z.data(), row(f), p.value[static_cast<std::size_t>(j)]);
    }
    const float label = p.class_label[static_cast<std::size_t>(s.label)];
    const auto known = std::find(m.labels.begin(), m.labels.end(), label);
    const auto c = static_cast<std::int32_t>(known - m.labels.begin());
    const float q = softmax(z.data(), z.size(), known == m.labels.end() ? 0 : c);
    const std::int32_t guess = predicted(z.data(), z.size());
    line = fmt::format("{}", m.labels[static_cast<std::size_t>(guess)]);
    for (float v : z) fmt::format_to(std::back_inserter(line), " {:.6g}", v);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out);
    measure(known == m.labels.end() ? 0.0f : q, guess == c, fit.log_loss, fit.correct);
  }
  fit.count = static_cast<std::int64_t>(p.train.size());
  if (std::fclose(out) != 0) throw IoError(fmt::format("--out: error writing '{}'", req.out_path));
  info(fmt::format("{} predictions: {}; accuracy {:.6f}, log-loss {:.6f}", fit.count, req.out_path, fit.accuracy(),
                   fit.loss()));
}

}  // namespace strata::apps::mlr
