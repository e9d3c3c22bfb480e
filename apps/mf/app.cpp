// `strata train mf` / `strata explain mf`: options, data, and which program runs.
#include <filesystem>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/train_loop.hpp"
#include "mf/serial.hpp"
#include "mf/strata.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps {

namespace {

using mf::Fit;

// The generator draws pairs as user * items + item in 64 bits and holds every
// rating about three times (drawn pairs, the ratings, their split); the model holds
// `rank` factors per user and per item, and as many AdaGrad sums.
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
}

mf::Problem make_problem(Runtime& rt, const RunConfig& c) {
  const double holdout = c.options.real("holdout", 0.0, 0.9);
  if (!c.data_path.empty()) {
    check_data_file(c.data_path, "rating file");
    return mf::load(rt, c.data_path, holdout, c.seed);
  }
  mf::SyntheticSpec s;
  s.users = c.synthetic.integer("users", 1);
  s.items = c.synthetic.integer("items", 1);
  s.ratings = c.synthetic.integer("ratings", 1);
  s.rank = static_cast<int>(c.synthetic.integer("rank", 1, 1000));
  check_synthetic_sizes(c, s);
  return mf::generate(s, holdout, c.seed);
}

mf::Options make_options(const RunConfig& c) {
  mf::Options o;
  o.rank = static_cast<int>(c.options.integer("rank", 1, mf::kMaxRank));
  o.adagrad = c.options.choice("step", {"plain", "adagrad"}) == "adagrad";
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 10));
  o.reg = static_cast<float>(c.options.real("reg", 0, 10));
  o.clock_every = c.options.integer("clock", 1);
  o.shuffled = c.options.choice("order", {"key", "shuffled"}) == "shuffled";
  o.rounds = static_cast<int>(c.options.integer("rounds", 0, 1024));
  o.slices = static_cast<int>(c.options.integer("slices", 0, 1024));
  if (o.rounds > 0 && o.slices > 0 && o.rounds % o.slices != 0)
    throw OptionError(fmt::format("--slices {} must divide --rounds {}", o.slices, o.rounds));
  o.seed = c.seed;
  return o;
}

std::vector<Metric> metrics(const Fit& train, const Fit& test) {
  return {{"loss", train.loss()}, {"train_rmse", train.rmse()}, {"test_rmse", test.rmse()}};
}

void save(const std::string& dir, DistArray<float, 2>& W, DistArray<float, 2>& H) {
  save_checkpoint(W, std::filesystem::path(dir) / "W");
  save_checkpoint(H, std::filesystem::path(dir) / "H");
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const mf::Problem p = make_problem(rt, c);
  const mf::Options o = make_options(c);
  info(fmt::format("{}; {} training, {} held out; rank {}, {} step, lr {}, reg {}", p.source, p.train.size(),
                   p.test.size(), o.rank, o.adagrad ? "AdaGrad" : "plain", o.lr, o.reg));
  const auto items = static_cast<std::int64_t>(p.train.size());
  if (c.serial) {
    mf::SerialMf m(p, o);
    run_passes(rt, c, items, report, [&] { m.pass(); }, [&] { return metrics(m.fit(p.train), m.fit(p.test)); });
    if (!c.save_dir.empty()) {
      auto W = array_from(rt, m.W(), Shape<2>{p.users, o.rank}), H = array_from(rt, m.H(), Shape<2>{p.items, o.rank});
      save(c.save_dir, W, H);
    }
    return;
  }
  mf::StrataMf m(rt, p, o, c.plan);
  run_passes(rt, c, items, report, [&] { m.pass(); }, [&] { return metrics(m.fit_train(), m.fit_test()); },
             [&] { info(describe_plan(m.report(), {"user", "item"})); });
  if (!c.save_dir.empty()) save(c.save_dir, m.W(), m.H());
}

void explain(Runtime& rt, const RunConfig& c) {
  const mf::Problem p = make_problem(rt, c);
  mf::StrataMf m(rt, p, make_options(c), c.plan);
  m.explain();
}

}  // namespace

App mf_app() { return {mf_info(), train, explain}; }

}  // namespace strata::apps
