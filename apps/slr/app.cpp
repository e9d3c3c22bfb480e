// `strata train slr` / `strata explain slr`: options, data, and which program runs
// (`strata predict slr` is predict.cpp).
#include <filesystem>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/held_out.hpp"
#include "common/memory_needs.hpp"
#include "common/relaxed_options.hpp"
#include "common/train_loop.hpp"
#include "slr/model_file.hpp"
#include "slr/predict.hpp"
#include "slr/serial.hpp"
#include "slr/strata.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps {

namespace {

// The --synthetic set, `holdout` of it held out.
slr::Problem synthetic_problem(const RunConfig& c, double holdout) {
  slr::SyntheticSpec s;
  s.samples = c.synthetic.integer("samples", 1);
  s.features = c.synthetic.integer("features", 1, INT32_MAX - 1);
  s.nnz = static_cast<int>(c.synthetic.integer("nnz", 1, 100'000));
  // Each sample holds about nnz (feature, value) pairs of 8 bytes and its own record.
  MemoryNeeds()
      .add(fmt::format("--synthetic samples={}", s.samples), static_cast<double>(s.samples), 8.0 * (s.nnz + 10) + 32)
      .check();
  return slr::generate(s, holdout, c.seed);
}

slr::Problem make_problem(Runtime& rt, const RunConfig& c) {
  slr::Problem p = classifier_data(
      c, [&](const std::string& path, double holdout) { return slr::load_libsvm(rt, path, holdout, c.seed); },
      [&](double holdout) { return synthetic_problem(c, holdout); },
      slr::attach_test);
  // The model is dense over the largest feature id: checked before it is allocated (a
  // sparse file with one huge id loads fine). Each feature holds a weight and a step's
  // state, in the program and in its Buffers.
  MemoryNeeds()
      .add(c.data_path.empty() ? fmt::format("--synthetic features={}", p.features)
                               : fmt::format("{}: feature ids up to {}", c.data_path, p.features),
           static_cast<double>(p.features), 40)
      .check();
  return p;
}

slr::Options make_options(const RunConfig& c) {
  slr::Options o;
  const std::string& step = c.options.choice("step", {"ftrl", "adagrad", "adarevision", "plain"});
  o.step = step == "ftrl" ? slr::Step::ftrl : step == "adagrad" ? slr::Step::adagrad
         : step == "adarevision" ? slr::Step::adarevision : slr::Step::plain;
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 100));
  o.ftrl_beta = static_cast<float>(c.options.real("beta", 0, 1e6));
  o.l1 = static_cast<float>(c.options.real("l1", 0, 1e6));
  o.l2 = static_cast<float>(c.options.real("l2", 0, 1e6));
  o.bias = c.options.choice("bias", {"yes", "no"}) == "yes";
  const RelaxedSettings relaxed = relaxed_settings(c);
  o.hybrid = relaxed.hybrid, o.staleness = relaxed.staleness, o.clock_every = relaxed.clock_every;
  o.thread_replicas = relaxed.thread_replicas;
  if (o.step == slr::Step::adarevision && o.l1 > 0)
    throw OptionError(
        "--l1 needs a step that shrinks weights itself (ftrl, adagrad or plain); adarevision takes --l2");
  if (o.step == slr::Step::ftrl && o.ftrl_beta == 0 && o.l2 == 0)
    throw OptionError("--beta 0 with --l2 0 leaves FTRL's first step undefined: give --beta or --l2 above 0");
  if (o.hybrid && !slr::updates_add(o.step))
    throw OptionError(
        "--step adarevision revises steps at the owners, which Hybrid cannot fold: add --consistency ssp");
  return o;
}

// Writes the weights as a checkpoint (DIR/w, what the Python module loads) and in
// liblinear's format (DIR/model.liblinear, for `strata predict slr` and liblinear).
void save(Runtime& rt, const std::string& dir, const std::vector<float>& w, const slr::Problem& p,
          const slr::Options& o) {
  const std::filesystem::path path(dir);
  save_checkpoint(array_from(rt, w, Shape<1>{static_cast<std::int64_t>(w.size())}), path / "w");
  if (rt.rank() != 0) return;
  slr::LinearModel m;
  m.w.assign(w.begin(), w.begin() + p.features);
  if (o.bias) m.bias = 1, m.bias_weight = w.back();
  m.negative = p.negative_label;
  m.solver = o.l1 > 0 ? "L1R_LR" : "L2R_LR";
  slr::write_liblinear_model((path / "model.liblinear").string(), m);
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const slr::Problem p = make_problem(rt, c);
  const slr::Options o = make_options(c);
  HeldOut held(c, !p.test.empty());
  const std::int64_t clock = slr::StrataSlr::clock_for(p, o, rt.size(), rt.threads());
  info(fmt::format("{}; {} training, {} held out; {} step, lr {}, l1 {}, l2 {}, {}{}", p.source, p.train.size(),
                   p.test.size(), c.options.text("step"), o.lr, o.l1, o.l2, o.bias ? "bias" : "no bias",
                   c.serial ? "" : fmt::format("; {}, {}",
                                               consistency_name(o.hybrid, o.thread_replicas, o.staleness, rt.threads()),
                                               clock ? fmt::format("a clock every {} samples a worker", clock)
                                                     : std::string("one clock a pass"))));
  const auto items = static_cast<std::int64_t>(p.train.size());
  std::vector<float> last;
  slr::Fit train;  // the pass's own: each sample measured just before its step
  if (c.serial) {
    slr::SerialSlr m(p, o);
    run_passes(rt, c, items, report, [&] { train = m.pass(); },
               [&] { return classifier_metrics(train, m.fit(p.test)); }, {},
               [&](const PassReport& r) { return held.after(r, [&] { return m.w(); }); });
    if (!c.save_dir.empty()) last = m.w();
  } else {
    slr::StrataSlr m(rt, p, o, data_parallel_loop(c, "slr", "weights"));
    run_passes(rt, c, items, report, [&] { train = m.pass(); }, [&] { return classifier_metrics(train, m.fit_test()); },
               [&] { info(describe_plan(m.report(), {"sample"})); },
               [&](const PassReport& r) { return held.after(r, [&] { return m.w().gather(); }); });
    if (!c.save_dir.empty() && held.kept.empty()) last = m.w().gather();
  }
  const std::vector<float> model = held.finish(info, std::move(last));
  if (!c.save_dir.empty()) save(rt, c.save_dir, model, p, o);
}

void explain(Runtime& rt, const RunConfig& c) {
  const slr::Problem p = make_problem(rt, c);
  slr::StrataSlr m(rt, p, make_options(c), data_parallel_loop(c, "slr", "weights"));
  m.explain();
}

}  // namespace

App slr_app() { return {slr_info(), train, explain, slr::predict}; }

}  // namespace strata::apps
