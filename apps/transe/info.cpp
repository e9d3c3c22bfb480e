// `strata transe`'s name, help and options, apart from its run functions (app.cpp) so
// that the command line's parser links no training code.
#include "common/app.hpp"
#include "common/relaxed_options.hpp"

namespace strata::apps {

AppInfo transe_info() {
  AppInfo a;
  a.name = "transe";
  a.summary = "knowledge-graph embedding: TransE (margin loss, one corrupted head or tail per triple, entity rows "
              "in the unit ball) through Buffers; expected plan: data-parallel 1-D over batches of triples";
  a.unit = "triples";
  a.synthetic_keys = Settings("--synthetic ");
  a.synthetic_keys.declare("entities", "10000", "entities")
      .declare("relations", "20", "relations (each moves an entity's cluster by its own step on a grid)")
      .declare("clusters", "400", "clusters of entities, on a square grid")
      .declare("triples", "200000", "triples");
  a.options.declare("dim", "50", "a row's length")
      .declare("margin", "1", "the margin between a triple's distance and its corruption's")
      .declare("lr", "0.1", "step size")
      .declare("norm", "2", "the distance |h + r - t|: 1 (L1) or 2 (L2)")
      .declare("batch", "100", "triples whose relation steps are summed and taken at once");
  declare_relaxed_options(a.options, "batches", "about 10 a pass", "about 100 a pass");
  a.options.declare("holdout", "0.1", "fraction of the triples held out")
      .declare("test", "", "a file of held-out triples instead of --holdout (all of --data trains)")
      .declare("rank", "1000", "held-out triples ranked after each pass (each ranks its head and tail among "
                               "all entities)");
  return a;
}

}  // namespace strata::apps
