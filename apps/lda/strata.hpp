// LDA on Strata: serial.cpp's program over DistArrays.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "lda/model.hpp"
#include "lda/problem.hpp"
#include "common/run_or_explain.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace strata::apps::lda {

class StrataLda {
 public:
  /// `plan`: nullopt lets the planner choose (a 2-D rotation over documents and
  /// words); data_parallel runs the parameter-server variant (word-topic counts
  /// through a Buffer as well, applied once per pass); any other strategy is forced
  /// on the sampling loop.
  StrataLda(Runtime& rt, const Problem& problem, const Options& options,
            std::optional<analysis::Strategy> plan = std::nullopt);
  /// One Gibbs pass over every token (collective).
  void pass();
  /// Mean log p(w | d) over tokens, as SerialLda computes it (collective).
  double loglik_per_token();
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The sampling loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  /// The serial order the last pass equals (collective).
  std::vector<Token> equivalent_order() const { return strata::equivalent_order(z_, report_); }

  DistArray<std::int32_t, 3>& topics() { return z_; }          ///< (doc, word, occurrence) -> topic
  DistArray<std::int32_t, 2>& doc_topic() { return doc_topic_; }    ///< docs x topic_row_width(K)
  DistArray<std::int32_t, 2>& word_topic() { return word_topic_; }  ///< words x topic_row_width(K)
  DistArray<std::int64_t, 1>& totals() { return totals_; }          ///< tokens per topic

 private:
  void pass_data_parallel();  // data_parallel.cpp
  void end_pass();

  Runtime& rt_;
  const Problem& p_;
  Options o_;
  LoopOptions loop_;
  bool data_parallel_ = false, explaining_ = false;
  int passes_ = 0;
  DistArray<std::int32_t, 3> z_;
  DistArray<std::int32_t, 2> doc_topic_, word_topic_;
  DistArray<std::int64_t, 1> totals_;
  DistArray<double, 2> inv_;  // 1 x (K + 1): coefficients(totals) as the pass began
  // Sampler::mh: the proposals as the pass began (mh_sampler.hpp), laid out as the
  // word rows (1 row when unused) and one shared row.
  DistArray<std::int32_t, 2> word_proposal_;
  DistArray<double, 2> dense_proposal_;
  std::unique_ptr<Buffer<std::int64_t, 1>> totals_buf_;
  std::unique_ptr<Buffer<std::int32_t, 2>> word_buf_;  // data-parallel variant only
  LoopReport report_;
};

}  // namespace strata::apps::lda
