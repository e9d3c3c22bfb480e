// `strata train transe` / `strata explain transe`: options, data, and which program runs.
#include <filesystem>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/data_file.hpp"
#include "common/memory_needs.hpp"
#include "common/relaxed_options.hpp"
#include "common/train_loop.hpp"
#include "common/vector_file.hpp"
#include "transe/serial.hpp"
#include "transe/strata.hpp"

namespace strata::apps {

namespace {

transe::Graph make_graph(const RunConfig& c, const transe::Options& o) {
  const double holdout = holdout_fraction(c);
  transe::Graph g;
  if (c.data_path.empty()) {
    transe::SyntheticSpec s;
    s.entities = static_cast<std::int32_t>(c.synthetic.integer("entities", 2, transe::Graph::kMaxEntities));
    s.relations = static_cast<std::int32_t>(c.synthetic.integer("relations", 1, transe::Graph::kMaxRelations));
    s.clusters = static_cast<std::int32_t>(c.synthetic.integer("clusters", 2, s.entities));
    s.triples = c.synthetic.integer("triples", 1);
    MemoryNeeds().add(fmt::format("--synthetic triples={}", s.triples), static_cast<double>(s.triples), 48).check();
    g = transe::generate(s, holdout, c.seed);
  } else {
    check_data_file(c.data_path, "triple file");
    g = transe::load_triples(c.data_path, holdout, c.seed);
  }
  if (const std::string& test = c.options.text("test"); !test.empty()) {
    check_data_file(test, "triple file", "--test");
    transe::attach_test(g, test);
  }
  transe::trim_test(g, c.options.integer("rank", 0));
  // Each entity and relation row is held in the array, its Buffer's deltas and a cache.
  MemoryNeeds()
      .add(fmt::format("{} entities x --dim {}", g.entities, o.dim), static_cast<double>(g.entities) + g.relations,
           3.0 * 4 * o.dim + 64)
      .check();
  return g;
}

transe::Options make_options(const RunConfig& c) {
  transe::Options o;
  o.dim = static_cast<int>(c.options.integer("dim", 1, 10'000));
  o.margin = static_cast<float>(c.options.real("margin", 0, 1e6));
  o.lr = static_cast<float>(c.options.real("lr", 1e-9, 100));
  o.norm = c.options.choice("norm", {"1", "2"}) == "1" ? 1 : 2;
  o.batch = static_cast<std::int32_t>(c.options.integer("batch", 1, 1'000'000));
  o.seed = c.seed;
  const RelaxedSettings relaxed = relaxed_settings(c);
  o.hybrid = relaxed.hybrid, o.staleness = relaxed.staleness, o.clock_every = relaxed.clock_every;
  o.thread_replicas = relaxed.thread_replicas;
  return o;
}

std::vector<Metric> metrics(const transe::Fit& train, const transe::Ranks& r) {
  return {{"loss", train.mean()},           {"mean_rank", r.mean_rank()},   {"mrr", r.mrr()},
          {"hits10", r.hits_at_10()},       {"raw_mean_rank", r.raw_mean_rank()},
          {"raw_hits10", r.raw_hits_at_10()}};
}

// DIR/entities.txt and DIR/relations.txt.
void save(Runtime& rt, const std::string& dir, const transe::Graph& g, const std::vector<float>& e,
          const std::vector<float>& r, int dim) {
  if (rt.rank() != 0) return;
  std::filesystem::create_directories(dir);
  write_vectors((std::filesystem::path(dir) / "entities.txt").string(), g.entity_names, e, dim);
  write_vectors((std::filesystem::path(dir) / "relations.txt").string(), g.relation_names, r, dim);
}

void train(Runtime& rt, const RunConfig& c, const InfoCallback& info, const PassCallback& report) {
  const transe::Options o = make_options(c);
  const transe::Graph g = make_graph(c, o);
  const std::int64_t clock = transe::StrataTranse::clock_for(g, o, rt.size(), rt.threads());
  info(fmt::format("{}; {} held-out triples ranked; dim {}, margin {}, lr {}, L{}, batch {}{}", g.source, g.test.size(),
                   o.dim, o.margin, o.lr, o.norm, o.batch,
                   c.serial ? "" : fmt::format("; {}, {}",
                                               consistency_name(o.hybrid, o.thread_replicas, o.staleness, rt.threads()),
                                               clock ? fmt::format("a clock every {} batches a worker", clock)
                                                     : std::string("one clock a pass"))));
  const auto items = static_cast<std::int64_t>(g.train.size());
  transe::Fit fit;
  if (c.serial) {
    transe::SerialTranse m(g, o);
    run_passes(rt, c, items, report, [&] { fit = m.pass(); }, [&] { return metrics(fit, m.rank_test()); });
    if (!c.save_dir.empty()) save(rt, c.save_dir, g, m.entities(), m.relations(), o.dim);
  } else {
    transe::StrataTranse m(rt, g, o, data_parallel_loop(c, "transe", "entity and relation rows"));
    run_passes(rt, c, items, report, [&] { fit = m.pass(); }, [&] { return metrics(fit, m.rank_test()); },
               [&] { info(describe_plan(m.report(), {"batch"})); });
    if (!c.save_dir.empty()) {
      const std::vector<float> e = m.entities().gather(), r = m.relations().gather();
      save(rt, c.save_dir, g, e, r, o.dim);
    }
  }
}

void explain(Runtime& rt, const RunConfig& c) {
  const transe::Options o = make_options(c);
  const transe::Graph g = make_graph(c, o);
  transe::StrataTranse m(rt, g, o, data_parallel_loop(c, "transe", "entity and relation rows"));
  m.explain();
}

}  // namespace

App transe_app() { return {transe_info(), train, explain, {}}; }

}  // namespace strata::apps
