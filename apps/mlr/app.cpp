// `strata train mlr` / `strata explain mlr`: options, data, and which program runs.
#include <filesystem>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/held_out.hpp"
#include "common/memory_needs.hpp"
#include "common/relaxed_options.hpp"
#include "common/train_loop.hpp"
#include "mlr/model_dir.hpp"
#include "mlr/predict.hpp"
#include "mlr/serial.hpp"
#include "mlr/strata.hpp"
#include "strata/io/checkpoint.hpp"

namespace strata::apps {

namespace {

// The --synthetic set, `holdout` of it held out.
mlr::Problem synthetic_problem(const RunConfig& c, double holdout) {
  mlr::SyntheticSpec s;
  s.samples = c.synthetic.integer("samples", 1);
  s.features = c.synthetic.integer("features", 1, INT32_MAX - 1);
  s.classes = static_cast<std::int32_t>(c.synthetic.integer("classes", 2, 100'000));
  s.nnz = static_cast<int>(c.synthetic.integer("nnz", 1, 100'000));
  s.signal = c.synthetic.real("signal", 0, 1);
  s.noise = c.synthetic.real("noise", 0, 1);
  if (s.classes > s.features)
    throw OptionError(fmt::format("--synthetic classes={} needs at least as many features (features={}): each "
                                  "class owns features",
                                  s.classes, s.features));
  // Each sample holds about nnz (feature, value) pairs of 8 bytes and its own record.
  MemoryNeeds()
      .add(fmt::format("--synthetic samples={}", s.samples), static_cast<double>(s.samples), 8.0 * (s.nnz + 5) + 32)
      .check();
  return mlr::generate(s, holdout, c.seed);
}

mlr::Problem make_problem(Runtime& rt, const RunConfig& c) {
  mlr::Problem p = classifier_data(
      c, [&](const std::string& path, double holdout) { return mlr::load_libsvm(rt, path, holdout, c.seed); },
      [&](double holdout) { return synthetic_problem(c, holdout); },
      mlr::attach_test);
  if (p.classes < 2)
    throw OptionError(fmt::format("{}: every sample has the label {}; mlr needs two classes or more", p.source,
                                  p.class_label.empty() ? 0.0f : p.class_label[0]));
  // The model is dense over the largest feature id: checked before it is allocated.
  // Each row holds its weights in the array and in its Buffer's deltas, and a rate.
  MemoryNeeds()
      .add(c.data_path.empty() ? fmt::format("--synthetic features={}, classes={}", p.features, p.classes)
                               : fmt::format("{}: feature ids up to {}, {} classes", c.data_path, p.features, p.classes),
           static_cast<double>(p.features + 1), 8.0 * p.classes + 24)
      .check();
  return p;
}

mlr::Options make_options(const RunConfig& c, const mlr::Problem& p) {
  mlr::Options o;
  o.step = c.options.choice("step", {"adagrad", "plain"}) == "adagrad" ? mlr::Step::adagrad : mlr::Step::plain;
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 100));
  o.l2 = static_cast<float>(c.options.real("l2", 0, 1e6));
  o.batch = c.options.text("batch") == "auto"
                ? mlr::auto_batch(static_cast<std::int64_t>(p.train.size()), mlr::train_nonzeros(p), p.features)
                : static_cast<std::int32_t>(c.options.integer("batch", 1, 1'000'000));
  o.bias = c.options.choice("bias", {"yes", "no"}) == "yes";
  const RelaxedSettings relaxed = relaxed_settings(c);
  o.hybrid = relaxed.hybrid, o.staleness = relaxed.staleness, o.clock_every = relaxed.clock_every;
  o.thread_replicas = relaxed.thread_replicas;
  return o;
}

// Writes the weights as a checkpoint (DIR/W: a row of classes per feature, then the
// bias row) and their shape and classes' labels (DIR/mlr.txt), which `strata predict
// mlr` reads.
void save(Runtime& rt, const std::string& dir, const std::vector<float>& w, const mlr::Problem& p,
          const mlr::Options& o) {
  const Shape<2> shape{static_cast<std::int64_t>(w.size()) / p.classes, p.classes};
  save_checkpoint(array_from(rt, w, shape), std::filesystem::path(dir) / "W");
  if (rt.rank() == 0) mlr::write_model_info(dir, {p.features, o.bias, p.class_label});
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const mlr::Problem p = make_problem(rt, c);
  const mlr::Options o = make_options(c, p);
  HeldOut held(c, !p.test.empty());
  const std::int64_t clock = mlr::StrataMlr::clock_for(p, o, rt.size(), rt.threads());
  info(fmt::format("{}; {} training, {} held out; {} step, lr {}, l2 {}, batch {}, {}{}", p.source, p.train.size(),
                   p.test.size(), c.options.text("step"), o.lr, o.l2, o.batch, o.bias ? "bias" : "no bias",
                   c.serial ? "" : fmt::format("; {}, {}",
                                               consistency_name(o.hybrid, o.thread_replicas, o.staleness, rt.threads()),
                                               clock ? fmt::format("a clock every {} batches a worker", clock)
                                                     : std::string("one clock a pass"))));
  const auto items = static_cast<std::int64_t>(p.train.size());
  std::vector<float> last;
  mlr::Fit train;  // the pass's own: each sample measured just before its step
  if (c.serial) {
    mlr::SerialMlr m(p, o);
    run_passes(rt, c, items, report, [&] { train = m.pass(); },
               [&] { return classifier_metrics(train, m.fit(p.test)); }, {},
               [&](const PassReport& r) { return held.after(r, [&] { return m.w(); }); });
    if (!c.save_dir.empty()) last = m.w();
  } else {
    mlr::StrataMlr m(rt, p, o, data_parallel_loop(c, "mlr", "weights"));
    run_passes(rt, c, items, report, [&] { train = m.pass(); },
               [&] { return classifier_metrics(train, m.fit_test()); },
               [&] { info(describe_plan(m.report(), {"batch"})); },
               [&](const PassReport& r) { return held.after(r, [&] { return m.w().gather(); }); });
    if (!c.save_dir.empty() && held.kept.empty()) last = m.w().gather();
  }
  const std::vector<float> model = held.finish(info, std::move(last));
  if (!c.save_dir.empty()) save(rt, c.save_dir, model, p, o);
}

void explain(Runtime& rt, const RunConfig& c) {
  const mlr::Problem p = make_problem(rt, c);
  mlr::StrataMlr m(rt, p, make_options(c, p), data_parallel_loop(c, "mlr", "weights"));
  m.explain();
}

}  // namespace

App mlr_app() { return {mlr_info(), train, explain, mlr::predict}; }

}  // namespace strata::apps
