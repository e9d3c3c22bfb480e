// TransE on Strata: serial.cpp's program over two DistArrays of rows (entities and
// relations) that Buffers serve as a parameter server; the loop over mini-batches of
// triples is data-parallel.
#pragma once

#include <memory>

#include "common/run_or_explain.hpp"
#include "common/train_loop.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "transe/model.hpp"
#include "transe/problem.hpp"

namespace strata::apps::transe {

class StrataTranse {
 public:
  StrataTranse(Runtime& rt, const Graph& graph, const Options& options, const LoopOptions& loop = {});
  /// The clock a run takes, in batches of a worker: options.clock_every, or about 10
  /// clocks a pass across ranks (none on one rank under Hybrid).
  static std::int64_t clock_for(const Graph& graph, const Options& options, int ranks, int threads);
  /// One pass over the training triples (collective); returns the pass's own fit.
  Fit pass();
  /// The held-out triples' ranks (collective).
  Ranks rank_test();
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  DistArray<float, 2>& entities() { return e_; }
  DistArray<float, 2>& relations() { return r_; }

 private:
  struct Access;  // one body call's readers and writers

  Runtime& rt_;
  const Graph& g_;
  Options o_;
  LoopOptions loop_;
  std::size_t dim_;
  DistArray<Batch, 1> B_;     // the training triples' batches: the loop's iterations
  DistArray<Triple, 1> T_;    // the held-out triples
  DistArray<float, 2> e_, r_;
  std::unique_ptr<Buffer<float, 2>> e_sum_, r_sum_;
  Accumulator<double> pass_loss_;
  Accumulator<std::int64_t> pass_violated_;
  LoopReport report_;
  int pass_ = 0;
  bool explaining_ = false;
};

}  // namespace strata::apps::transe
