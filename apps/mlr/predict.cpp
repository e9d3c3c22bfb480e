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
  // An id beyond the model's features has no weights: skipped, as liblinear skips it.
  const auto feature_row = [&](std::int64_t f) { return f < m.features ? row(f) : std::span<const float>{}; };
  // The model's class of each of the file's labels (-1: a label the model does not know).
  std::vector<std::int32_t> model_class;
  for (const float label : p.class_label) {
    const auto known = std::find(m.labels.begin(), m.labels.end(), label);
    model_class.push_back(known == m.labels.end() ? -1 : static_cast<std::int32_t>(known - m.labels.begin()));
  }
  std::vector<float> z(static_cast<std::size_t>(k));
  Fit fit;
  for (const Sample& s : p.train) {
    sample_scores(z.data(), z.size(), m.bias ? row(m.features) : std::span<const float>{}, p, s, feature_row);
    const std::int32_t c = model_class[static_cast<std::size_t>(s.label)];
    const float q = softmax(z.data(), z.size(), std::max(c, 0));
    const std::int32_t guess = predicted(z.data(), z.size());
    line = fmt::format("{}", m.labels[static_cast<std::size_t>(guess)]);
    for (float v : z) fmt::format_to(std::back_inserter(line), " {:.6g}", v);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out);
    measure(c < 0 ? 0.0f : q, guess == c, fit.log_loss, fit.correct);
  }
  fit.count = static_cast<std::int64_t>(p.train.size());
  if (std::fclose(out) != 0) throw IoError(fmt::format("--out: error writing '{}'", req.out_path));
  info(fmt::format("{} predictions: {}; accuracy {:.6f}, log-loss {:.6f}", fit.count, req.out_path, fit.accuracy(),
                   fit.loss()));
}

}  // namespace strata::apps::mlr
