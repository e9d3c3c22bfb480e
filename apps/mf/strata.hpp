// Matrix factorisation on Strata: serial.cpp's program over DistArrays.
#pragma once

#include <memory>
#include <optional>
#include <source_location>
#include <vector>

#include "mf/model.hpp"
#include "mf/problem.hpp"
#include "common/run_or_explain.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace strata::apps::mf {

class StrataMf {
 public:
  /// `plan`: nullopt lets the planner choose (a 2-D rotation); data_parallel runs the
  /// parameter-server variant (item factors through Buffers, BSP clocks every
  /// options.clock_every iterations); any other strategy is forced on the loop.
  /// The model copies the problem's ratings into its arrays and keeps no reference
  /// to it: the caller may release them (the command does, holding them once).
  StrataMf(Runtime& rt, const Problem& problem, const Options& options,
           std::optional<analysis::Strategy> plan = std::nullopt);
  struct ReleaseRatings {};
  /// The same, releasing the problem's training and held-out ratings (its other
  /// fields stay) as soon as each set's array is filled, before it is routed to the
  /// owners: the ratings are then held once at the peak (the command's way).
  StrataMf(Runtime& rt, Problem& problem, const Options& options, std::optional<analysis::Strategy> plan,
           ReleaseRatings);
  /// One SGD pass over the training ratings (collective). Returns the sum of their
  /// losses, each taken just before its step.
  double pass();
  // Two loop sites (each call's line): one site alternating between the two sets
  // would be planned afresh, reconnaissance and all, at every call.
  Fit fit_train() { return fit(R_); }
  Fit fit_test() { return fit(T_); }
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  /// The serial order the last pass equals (collective).
  std::vector<Rating> equivalent_order() const;
  DistArray<float, 2>& W() { return W_; }
  DistArray<float, 2>& H() { return H_; }

 private:
  StrataMf(Runtime& rt, const Problem& problem, Problem* releasing, const Options& options,
           std::optional<analysis::Strategy> plan);

  Fit fit(DistArray<float, 2>& ratings, std::source_location where = std::source_location::current());
  void pass_data_parallel();

  Runtime& rt_;
  Options o_;
  int passes_ = 0;  ///< passes run (the first of the rows step is a warm-up)
  LoopOptions loop_;
  bool data_parallel_ = false, explaining_ = false;
  /// Users (and what follows them: R, W, GW) split by their ratings, as the plan
  /// splits them with one thread a rank: the first call moves none of them.
  Partition by_users_;
  DistArray<float, 2> R_, T_, W_, H_, GW_, GH_;
  std::unique_ptr<Buffer<float, 2>> hbuf_, ghbuf_;  // data-parallel variant only
  LoopReport report_;
  Accumulator<double> pass_loss_;
};

}  // namespace strata::apps::mf
