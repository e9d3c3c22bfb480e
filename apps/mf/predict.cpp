// `strata predict mf --model DIR --data FILE --out FILE`. Rank 0 does the work (a file
// of pairs is read once, in order); the factors come from the checkpoints.
#include "mf/predict.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "mf/model_dir.hpp"
#include "mf/rating_file.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps::mf {

namespace {

std::vector<float> factors(Runtime& rt, const std::filesystem::path& dir, std::int64_t rows, int K) {
  auto a = load_checkpoint<float, 2>(rt, dir);
  if (a.shape()[0] != rows || a.shape()[1] != K)
    throw CheckpointError(fmt::format("--model: {} holds a {} x {} array; mf.txt says {} x {}", dir.string(),
                                      a.shape()[0], a.shape()[1], rows, K));
  return a.gather();
}

std::int64_t row_of(const std::vector<std::int64_t>& ids, std::int64_t rows, std::int64_t id, const char* what,
                    const std::string& path, std::int64_t line) {
  const std::int64_t r = model_row(ids, rows, id);
  if (r < 0)
    throw ParseError(path, line, fmt::format("{} ...", id),
                     fmt::format("{} id {} is not in the model (--model was trained on {} {}s)", what, id, rows, what));
  return r;
}

}  // namespace

void predict(Runtime& rt, const PredictRequest& req, const InfoCallback& info) {
  const ModelInfo m = read_model_info(req.model_dir);
  const std::filesystem::path dir(req.model_dir);
  const std::vector<float> W = factors(rt, dir / "W", m.users, m.rank), H = factors(rt, dir / "H", m.items, m.rank);
  if (rt.rank() != 0) return;
  const std::vector<LineRating> lines = read_rating_lines(req.data_path, false, "--data");
  // Every id checked before --out is opened: a bad line leaves no half-written file.
  std::vector<std::pair<std::size_t, std::size_t>> rows;
  rows.reserve(lines.size());
  for (const LineRating& l : lines)
    rows.emplace_back(static_cast<std::size_t>(row_of(m.user_ids, m.users, l.user, "user", req.data_path, l.line)),
                      static_cast<std::size_t>(row_of(m.item_ids, m.items, l.item, "item", req.data_path, l.line)));
  std::FILE* out = std::fopen(req.out_path.c_str(), "w");
  if (!out) throw IoError(fmt::format("--out: cannot write '{}'", req.out_path));
  Options o;
  o.rank = m.rank;
  o.loss = m.loss;
  o.l2_user = o.l2_item = 0;
  Fit fit;
  const auto K = static_cast<std::size_t>(m.rank);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const LineRating& l = lines[k];
    const auto [u, i] = rows[k];
    const float* w = &W[u * K];
    const float* h = &H[i * K];
    std::fprintf(out, "%.6g\n", static_cast<double>(kernels::dot(w, h, K)));
    if (l.rated) {
      measure(w, h, m.rank, l.value, o, fit);
      ++fit.count;
    }
  }
  if (std::fclose(out) != 0) throw IoError(fmt::format("--out: error writing '{}'", req.out_path));
  std::string line = fmt::format("{} predictions: {}", lines.size(), req.out_path);
  if (fit.count > 0) {
    switch (m.loss) {
      case Loss::squared: line += fmt::format("; rmse {:.6f}", fit.rmse()); break;
      case Loss::absolute: line += fmt::format("; mae {:.6f}", fit.mean(fit.absolute)); break;
      case Loss::logistic: line += fmt::format("; logloss {:.6f}", fit.mean(fit.logloss)); [[fallthrough]];
      case Loss::hinge: line += fmt::format("; accuracy {:.6f}", fit.mean(static_cast<double>(fit.correct))); break;
    }
    line += fmt::format(" over the {} rated lines", fit.count);
  }
  info(line);
}

}  // namespace strata::apps::mf
