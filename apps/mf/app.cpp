// `strata train mf` / `strata explain mf`: options, data, and which program runs
// (`strata predict mf` is predict.cpp).
#include <cmath>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/train_loop.hpp"
#include "mf/model_dir.hpp"
#include "mf/predict.hpp"
#include "mf/rating_file.hpp"
#include "mf/serial.hpp"
#include "mf/strata.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/load.hpp"

namespace strata::apps {

namespace {

using mf::Fit;

// The generator draws pairs as user * items + item in 64 bits and holds every
// rating about three times (drawn pairs, the ratings, their split); the model holds
// `rank` factors per user and per item, and as many AdaGrad sums at most.
void check_synthetic_sizes(const RunConfig& c, const mf::SyntheticSpec& s) {
  if (s.users > INT64_MAX / s.items)
    throw OptionError(fmt::format("--synthetic users={} x items={} is too large: more user-item pairs than 2^63",
                                  s.users, s.items));
  const double k = static_cast<double>(c.options.integer("rank", 1, mf::kMaxRank));
  MemoryNeeds()
      .add(fmt::format("--synthetic ratings={}", s.ratings), static_cast<double>(s.ratings), 64)
      .add(fmt::format("--synthetic users={}", s.users), static_cast<double>(s.users), 8 * k)
      .add(fmt::format("--synthetic items={}", s.items), static_cast<double>(s.items), 16 + 8 * k)
      .check();
  if (s.users > mf::kMaxRows || s.items > mf::kMaxRows)
    throw OptionError(fmt::format("--synthetic users={} items={}: at most {} of each (model rows are 32-bit numbers)",
                                  s.users, s.items, mf::kMaxRows));
}

// --test FILE's ratings become the held-out set, through the training data's ids,
// parsed as --data is (every rank and thread a part of the file; a ParseError names
// the line). A rating of a user or item the training data lacks has no factors to
// predict with: it is left out, and counted in the run's description. A shared
// problem keeps each rank's part; otherwise every rank holds them all, in file order
// (the serial program's order of measuring).
void attach_test_file(Runtime& rt, mf::Problem& p, const std::string& path) {
  check_data_file(path, "rating file", "--test");
  std::vector<Entry<float, 2>> held = parse_entries<float, 2>(rt, path, parse::ratings);
  if (!p.shared && rt.size() > 1) held = rt.comm().allgather_vector(std::move(held));
  std::int64_t unseen = 0;
  p.test.reserve(held.size());
  for (const Entry<float, 2>& e : held) {
    const std::int64_t u = mf::model_row(p.user_ids, p.users, e.index[0]);
    const std::int64_t i = mf::model_row(p.item_ids, p.items, e.index[1]);
    if (u < 0 || i < 0) ++unseen;
    else p.test.push_back({static_cast<std::int32_t>(u), static_cast<std::int32_t>(i), e.value});
  }
  p.test_count = static_cast<std::int64_t>(p.test.size());
  if (p.shared) {
    p.test_count = rt.comm().allreduce(p.test_count, ReduceOp::sum);
    unseen = rt.comm().allreduce(unseen, ReduceOp::sum);
  }
  p.source += fmt::format("; --test {}: {} ratings", path, p.test_count);
  if (unseen > 0) p.source += fmt::format(" ({} more left out: their user or item is not in --data)", unseen);
}

// On several ranks the Strata program reads a share of the file per rank (the serial
// program and cross-validation's folds need every rating on every rank).
mf::Problem make_problem(Runtime& rt, const RunConfig& c, bool whole) {
  const double holdout = holdout_fraction(c);
  const std::string& test = c.options.text("test");
  mf::Problem p;
  if (!c.data_path.empty()) {
    check_data_file(c.data_path, "rating file");
    p = whole || rt.size() == 1
            ? mf::load(rt, c.data_path, holdout, c.seed, c.serial ? mf::Order::serial : mf::Order::any)
            : mf::load_share(rt, c.data_path, holdout, c.seed);
  } else {
    mf::SyntheticSpec s;
    s.users = c.synthetic.integer("users", 1);
    s.items = c.synthetic.integer("items", 1);
    s.ratings = c.synthetic.integer("ratings", 1);
    s.rank = static_cast<int>(c.synthetic.integer("rank", 1, 1000));
    check_synthetic_sizes(c, s);
    p = mf::generate(s, holdout, c.seed);
  }
  if (!test.empty()) attach_test_file(rt, p, test);
  return p;
}

// "--l2 0.05" (users and items alike) or "--l2 0.05,0.01" (users, items), as LIBMF's -l2 P,Q.
std::pair<float, float> weight_pair(const Settings& options, const std::string& name) {
  const std::string& text = options.text(name);
  const auto comma = text.find(',');
  Settings one;
  one.declare(name, text.substr(0, comma), "");
  const double user = one.real(name, 0, 100);
  if (comma == std::string::npos) return {static_cast<float>(user), static_cast<float>(user)};
  one.set(name, text.substr(comma + 1));
  return {static_cast<float>(user), static_cast<float>(one.real(name, 0, 100))};
}

mf::Options make_options(const RunConfig& c) {
  mf::Options o;
  o.rank = static_cast<int>(c.options.integer("rank", 1, mf::kMaxRank));
  const std::string& step = c.options.choice("step", {"rows", "plain", "adagrad"});
  o.step = step == "rows" ? mf::Step::rows : step == "plain" ? mf::Step::plain : mf::Step::adagrad;
  o.loss = mf::parse_loss(c.options.choice("loss", {"squared", "absolute", "logistic", "hinge"}), "--loss");
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 10));
  std::tie(o.l2_user, o.l2_item) = weight_pair(c.options, "l2");
  std::tie(o.l1_user, o.l1_item) = weight_pair(c.options, "l1");
  o.nmf = c.options.choice("nmf", {"no", "yes"}) == "yes";
  o.clock_every = c.options.integer("clock", 1);
  o.shuffled = c.options.choice("order", {"key", "shuffled"}) == "shuffled";
  o.rounds = static_cast<int>(c.options.integer("rounds", 0, 1024));
  o.slices = static_cast<int>(c.options.integer("slices", 0, 1024));
  if (o.rounds > 0 && o.slices > 0 && o.rounds % o.slices != 0)
    throw OptionError(fmt::format("--slices {} must divide --rounds {}", o.slices, o.rounds));
  o.seed = c.seed;
  return o;
}

// The training loss first (the one plotted: the mean over the pass of each rating's
// loss just before its step, as LIBMF reports it, so measuring costs no second pass
// over the training set), then the held-out measures of the chosen loss.
std::vector<Metric> metrics(const mf::Options& o, double train_loss, const Fit& test) {
  std::vector<Metric> m{{"loss", train_loss}};
  switch (o.loss) {
    case mf::Loss::squared:
      m.push_back({"train_rmse", std::sqrt(train_loss)});
      m.push_back({"test_rmse", test.rmse()});
      break;
    case mf::Loss::absolute: m.push_back({"test_mae", test.mean(test.absolute)}); break;
    case mf::Loss::logistic:
      m.push_back({"test_logloss", test.mean(test.logloss)});
      [[fallthrough]];
    case mf::Loss::hinge:
      m.push_back({"test_accuracy", test.mean(static_cast<double>(test.correct))});
      break;
  }
  return m;
}

void save(const std::string& dir, DistArray<float, 2>& W, DistArray<float, 2>& H, const mf::Problem& p,
          const mf::Options& o) {
  save_checkpoint(W, std::filesystem::path(dir) / "W");
  save_checkpoint(H, std::filesystem::path(dir) / "H");
  if (W.runtime().rank() == 0) mf::write_model_info(dir, p, o);
}

// Trains one model on p for c.epochs passes, reporting each; saves it to `save_dir`
// unless that is empty. The Strata version releases p's ratings once its arrays hold them.
void train_one(Runtime& rt, const RunConfig& c, mf::Problem& p, const mf::Options& o, const InfoCallback& info,
               const PassCallback& report, const std::string& save_dir) {
  const std::int64_t items = p.train_count;
  double loss = 0;
  if (c.serial) {
    mf::SerialMf m(p, o);
    run_passes(rt, c, items, report, [&] { loss = m.pass() / static_cast<double>(items); },
               [&] { return metrics(o, loss, m.fit(p.test)); });
    if (!save_dir.empty()) {
      auto W = array_from(rt, m.W(), Shape<2>{p.users, o.rank}), H = array_from(rt, m.H(), Shape<2>{p.items, o.rank});
      save(save_dir, W, H, p, o);
    }
    return;
  }
  // The model's arrays take the ratings, the problem's copies going as each is filled
  // (#31, #27: the data once).
  mf::StrataMf m(rt, p, o, c.plan, mf::StrataMf::ReleaseRatings{});
  run_passes(rt, c, items, report, [&] { loss = m.pass() / static_cast<double>(items); },
             [&] { return metrics(o, loss, m.fit_test()); },
             [&] { info(describe_plan(m.report(), {"user", "item"})); });
  if (!save_dir.empty()) save(save_dir, m.W(), m.H(), p, o);
}

// --folds K (LIBMF's -v): the ratings split in K folds by a hash of the pair; K models,
// each trained on all folds but one and measured on that one. Each pass reports the
// mean over the folds of every metric (and the folds' summed time).
void cross_validate(Runtime& rt, const RunConfig& c, const mf::Problem& all, const mf::Options& o, int folds,
                    const InfoCallback& info, const PassCallback& report) {
  std::vector<PassReport> mean;
  for (int f = 0; f < folds; ++f) {
    mf::Problem p = mf::fold(all, f, folds, c.seed);
    const std::int64_t trained = p.train_count, held = p.test_count;
    std::size_t pass = 0;
    std::vector<Metric> last;
    train_one(rt, c, p, o, [](const std::string&) {}, [&](const PassReport& r) {
      if (pass == mean.size()) mean.push_back({r.pass, 0, 0, std::vector<Metric>(r.metrics.size()), r.restored});
      PassReport& m = mean[pass++];
      m.seconds += r.seconds;
      m.items += r.items;
      for (std::size_t k = 0; k < r.metrics.size(); ++k) {
        m.metrics[k].name = r.metrics[k].name;
        m.metrics[k].value += r.metrics[k].value / folds;
      }
      last = r.metrics;
    }, "");
    info(fmt::format("fold {}/{}: {} training, {} held out; after pass {}: {} {:.6f}", f + 1, folds, trained, held,
                     c.epochs, last.back().name, last.back().value));
  }
  const Metric& final_mean = mean.back().metrics.back();
  info(fmt::format("cross-validation: mean {} over {} folds after pass {}: {:.6f}", final_mean.name, folds, c.epochs,
                   final_mean.value));
  for (const PassReport& r : mean) report(r);
}
void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const int folds = static_cast<int>(c.options.integer("folds", 0, 100));
  if (folds == 1) throw OptionError("--folds: 1 fold leaves nothing to measure on: give 2 or more (0: none)");
  if (folds > 1 && (!c.options.text("test").empty() || c.options.text("holdout") != "0.1"))
    throw OptionError("--folds measures on each fold in turn: drop --test and --holdout");
  if (folds > 1 && !c.save_dir.empty()) throw OptionError("--folds trains one model per fold: drop --save");
  mf::Problem p = make_problem(rt, c, c.serial || folds > 1);
  const mf::Options o = make_options(c);
  info(fmt::format("{}; {} training, {} held out; rank {}, {} loss, {} step, lr {}, l2 {},{}", p.source,
                   folds > 1 ? p.train_count + p.test_count : p.train_count, folds > 1 ? 0 : p.test_count, o.rank,
                   c.options.text("loss"), c.options.text("step"), o.lr, o.l2_user, o.l2_item));
  if (folds > 1) return cross_validate(rt, c, p, o, folds, info, report);
  train_one(rt, c, p, o, info, report, c.save_dir);
}

void explain(Runtime& rt, const RunConfig& c) {
  const mf::Problem p = make_problem(rt, c, false);
  mf::StrataMf m(rt, p, make_options(c), c.plan);
  m.explain();
}

}  // namespace

App mf_app() { return {mf_info(), train, explain, mf::predict}; }

}  // namespace strata::apps
