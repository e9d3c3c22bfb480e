// `strata train slr` / `strata explain slr`: options, data, and which program runs.
#include <filesystem>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/train_loop.hpp"
#include "slr/serial.hpp"
#include "slr/strata.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps {

namespace {

slr::Problem make_problem(Runtime& rt, const RunConfig& c) {
  const double holdout = c.options.real("holdout", 0.0, 0.9);
  if (!c.data_path.empty()) {
    check_data_file(c.data_path, "LIBSVM file");
    slr::Problem p = slr::load_libsvm(rt, c.data_path, holdout, c.seed);
    // The model is dense over the largest feature id in the file: checked before it is
    // allocated (a sparse file with one huge id loads fine).
    MemoryNeeds()
        .add(fmt::format("{}: feature ids up to {}", c.data_path, p.features), static_cast<double>(p.features), 32)
        .check();
    return p;
  }
  slr::SyntheticSpec s;
  s.samples = c.synthetic.integer("samples", 1);
  s.features = c.synthetic.integer("features", 1, INT32_MAX);
  s.nnz = static_cast<int>(c.synthetic.integer("nnz", 1, 100'000));
  // Each sample holds about nnz (feature, value) pairs of 8 bytes and its own record;
  // each feature a weight and the step's state, in the program and in the Buffer.
  MemoryNeeds()
      .add(fmt::format("--synthetic samples={}", s.samples), static_cast<double>(s.samples), 8.0 * (s.nnz + 10) + 32)
      .add(fmt::format("--synthetic features={}", s.features), static_cast<double>(s.features), 32)
      .check();
  return slr::generate(s, holdout, c.seed);
}

slr::Options make_options(const RunConfig& c) {
  slr::Options o;
  o.adarevision = c.options.choice("step", {"plain", "adarevision"}) == "adarevision";
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 100));
  o.staleness = static_cast<int>(c.options.integer("staleness", 0, 1000));
  o.clock_every = c.options.integer("clock", 0);
  return o;
}

std::vector<Metric> metrics(const slr::Fit& train, const slr::Fit& test) {
  return {{"loss", train.loss()}, {"accuracy", train.accuracy()}, {"test_loss", test.loss()},
          {"test_accuracy", test.accuracy()}};
}

LoopOptions loop_options(const RunConfig& c) {
  LoopOptions l;
  if (c.plan && *c.plan != analysis::Strategy::data_parallel)
    throw OptionError(fmt::format("--plan {}: slr writes its weights through a Buffer, so its loop is data-parallel "
                                  "(use --plan auto or data_parallel)", analysis::to_string(*c.plan)));
  l.strategy = c.plan;
  return l;
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const slr::Problem p = make_problem(rt, c);
  const slr::Options o = make_options(c);
  info(fmt::format("{}; {} training, {} held out; {} step, lr {}, staleness {}, clock every {} iterations", p.source,
                   p.train.size(), p.test.size(), o.adarevision ? "AdaRevision" : "plain", o.lr, o.staleness,
                   o.clock_every));
  const auto items = static_cast<std::int64_t>(p.train.size());
  const std::filesystem::path dir = c.save_dir;
  if (c.serial) {
    slr::SerialSlr m(p, o);
    run_passes(rt, c, items, report, [&] { m.pass(); }, [&] { return metrics(m.fit(p.train), m.fit(p.test)); });
    if (!c.save_dir.empty()) save_checkpoint(array_from(rt, m.w(), Shape<1>{p.features}), dir / "w");
    return;
  }
  slr::StrataSlr m(rt, p, o, loop_options(c));
  run_passes(rt, c, items, report, [&] { m.pass(); }, [&] { return metrics(m.fit_train(), m.fit_test()); },
             [&] { info(describe_plan(m.report(), {"sample"})); });
  if (!c.save_dir.empty()) save_checkpoint(m.w(), dir / "w");
}

void explain(Runtime& rt, const RunConfig& c) {
  const slr::Problem p = make_problem(rt, c);
  slr::StrataSlr m(rt, p, make_options(c), loop_options(c));
  m.explain();
}

}  // namespace

App slr_app() { return {slr_info(), train, explain, {}}; }  // no predict yet

}  // namespace strata::apps
