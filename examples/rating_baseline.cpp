// End-to-end example on the foundation layer: load a rating file as a sparse
// DistArray on every rank, fit a baseline predictor
//     r(u, i) ~ mu + b_user[u] + b_item[i]
// by alternating regularised least squares, and report the training RMSE after each
// sweep, the most-rated items, and a checkpoint round trip of the user biases.
//
//   rating-baseline FILE [--sweeps N] [--lambda L] [--checkpoint DIR]
//   mpirun -np 2 rating-baseline FILE
//
// Ratings are partitioned by user (range over dimension 0) and the user biases use
// the same partition, so every user's update reads only local data; item biases are
// small and replicated, summed across ranks with one allreduce per sweep.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>

#include "strata/strata.hpp"

namespace {

struct Options {
  std::string path;
  int sweeps = 4;
  double lambda = 5.0;
  std::string checkpoint;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw strata::OptionError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sweeps") {
      o.sweeps = std::atoi(value().c_str());
      if (o.sweeps < 1) throw strata::OptionError("--sweeps must be a positive integer");
    } else if (a == "--lambda") {
      o.lambda = std::atof(value().c_str());
      if (!(o.lambda >= 0)) throw strata::OptionError("--lambda must be >= 0");
    } else if (a == "--checkpoint") {
      o.checkpoint = value();
    } else if (!a.empty() && a[0] == '-') {
      throw strata::OptionError("unknown option " + a);
    } else {
      o.path = a;
    }
  }
  if (o.path.empty()) throw strata::OptionError("usage: rating-baseline FILE [--sweeps N] [--lambda L] [--checkpoint DIR]");
  return o;
}

}  // namespace

int run(strata::Runtime& rt, int argc, char** argv) {
  {
    const Options opt = parse(argc, argv);
    strata::LoadReport rep;
    auto R = strata::load_sparse<float, 2>(rt, opt.path, strata::parse::triplets, {}, {}, &rep);
    const std::int64_t users = R.extent(0), items = R.extent(1);
    rt.log_once("loaded {} ratings ({} users x {} items) from {} in {:.2f} s on {} rank(s) x {} thread(s)",
                R.nnz(), users, items, opt.path, rep.total_seconds, rt.size(), rt.threads());

    // Global mean.
    double local_sum = 0;
    for (float r : R.local_values()) local_sum += r;
    const double mu = rt.comm().allreduce(local_sum, strata::ReduceOp::sum) / static_cast<double>(R.nnz());

    // User biases live with the users' ratings; item biases are replicated.
    auto b_user = strata::DistArray<double, 1>::zeros(rt, {users}, R.partition());
    std::vector<double> b_item(static_cast<std::size_t>(items), 0.0);
    const auto ratings_per_item = R.histogram(1);

    // Baseline of the baseline: predicting the mean for everyone.
    double sq0 = 0;
    for (float r : R.local_values()) sq0 += (r - mu) * (r - mu);
    rt.log_once("global mean {:.4f}; RMSE of predicting the mean: {:.4f}", mu,
                std::sqrt(rt.comm().allreduce(sq0, strata::ReduceOp::sum) / static_cast<double>(R.nnz())));

    for (int sweep = 1; sweep <= opt.sweeps; ++sweep) {
      // Users: closed-form ridge update from local ratings only.
      std::vector<double> num(static_cast<std::size_t>(b_user.local_nnz()), 0.0), cnt(num.size(), 0.0);
      const auto& user_box = b_user.local_box()[0];
      R.for_each_local([&](const strata::Index<2>& ui, float r) {
        const auto k = static_cast<std::size_t>(user_box.local(ui[0]));
        num[k] += r - mu - b_item[static_cast<std::size_t>(ui[1])];
        cnt[k] += 1;
      });
      auto bu = b_user.local_values();
      for (std::size_t k = 0; k < bu.size(); ++k) bu[k] = num[k] / (opt.lambda + cnt[k]);

      // Items: partial sums on every rank, then one allreduce.
      std::vector<double> item_num(static_cast<std::size_t>(items), 0.0);
      R.for_each_local([&](const strata::Index<2>& ui, float r) {
        item_num[static_cast<std::size_t>(ui[1])] += r - mu - b_user.at({ui[0]});
      });
      rt.comm().allreduce(std::span(item_num), strata::ReduceOp::sum);
      for (std::int64_t i = 0; i < items; ++i)
        b_item[static_cast<std::size_t>(i)] =
            item_num[static_cast<std::size_t>(i)] / (opt.lambda + static_cast<double>(ratings_per_item[static_cast<std::size_t>(i)]));

      // Training RMSE.
      double sq = 0;
      R.for_each_local([&](const strata::Index<2>& ui, float r) {
        const double e = r - (mu + b_user.at({ui[0]}) + b_item[static_cast<std::size_t>(ui[1])]);
        sq += e * e;
      });
      const double rmse = std::sqrt(rt.comm().allreduce(sq, strata::ReduceOp::sum) / static_cast<double>(R.nnz()));
      rt.log_once("sweep {}: training RMSE {:.4f}", sweep, rmse);
    }
    // Most-rated items, from a histogram along dimension 1.
    std::vector<std::int64_t> order(static_cast<std::size_t>(items));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + std::min<std::int64_t>(5, items), order.end(),
                      [&](auto a, auto b) { return ratings_per_item[static_cast<std::size_t>(a)] > ratings_per_item[static_cast<std::size_t>(b)]; });
    for (std::int64_t k = 0; k < std::min<std::int64_t>(5, items); ++k) {
      const auto i = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
      rt.log_once("popular item {}: {} ratings, bias {:+.3f}", i, ratings_per_item[i], b_item[i]);
    }

    // Checkpoint round trip of the distributed user biases.
    if (!opt.checkpoint.empty()) {
      strata::save_checkpoint(b_user, opt.checkpoint);
      const auto back = strata::load_checkpoint<double, 1>(rt, opt.checkpoint);
      const bool same = back.gather() == b_user.gather();
      rt.log_once("checkpoint of user biases written to {} and read back: {}", opt.checkpoint,
                  same ? "identical" : "MISMATCH");
      if (!same) return 1;
    }
    return 0;
  }
}

int main(int argc, char** argv) {
  int rank = 0;
  try {
    strata::Runtime rt(argc, argv);
    rank = rt.rank();
    return run(rt, argc, argv);
  } catch (const strata::Error& e) {
    // Errors are collective: every rank has the same message, so rank 0 prints it.
    if (rank == 0) std::fprintf(stderr, "rating-baseline: %s\n", e.what());
    return 1;
  }
}
