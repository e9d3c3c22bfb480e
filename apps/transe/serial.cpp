// TransE, serial. strata.cpp is this file moved to Strata; the two are kept line for
// line alike so their diff shows what it costs.
#include "transe/serial.hpp"

namespace strata::apps::transe {

SerialTranse::SerialTranse(const Graph& graph, const Options& options)
    : g_(graph), o_(options), dim_(static_cast<std::size_t>(options.dim)),
      batches_(batches(static_cast<std::int64_t>(graph.train.size()), options.batch)),
      e_(initial_rows(options.seed, 0, graph.entities, options.dim)),
      r_(initial_rows(options.seed, 1, graph.relations, options.dim)) {}

Fit SerialTranse::pass() {
  Fit fit;
  for (const Batch& b : batches_) {
    Scratch& s = scratch(o_.dim);
    RowSums& relations = thread_row_sums(g_.relations, dim_);
    for (std::int64_t i = b.first; i < b.first + b.count; ++i) {
      const Triple& t = g_.train[static_cast<std::size_t>(i)];
      const Corruption c = corrupt(o_.seed, pass_, i, t, g_.entities);
      const float loss =
          triple_step(t, c, o_, s, relations, [&](int table, std::int32_t id) { return row(table, id); });
      fit.loss += loss, ++fit.triples, fit.violated += loss > 0;
      for (int k = 0; k < s.entities.count; ++k) {
        float* e = row(0, s.entities.id[k]);
        projected_delta(e, s.entities.step.data() + static_cast<std::size_t>(k) * dim_, s.delta.data(), o_.dim);
        for (std::size_t j = 0; j < dim_; ++j) e[j] += s.delta[j];
      }
    }
    for (std::size_t k = 0; k < relations.rows().size(); ++k) {
      float* r = row(1, static_cast<std::int32_t>(relations.rows()[k]));
      for (std::size_t j = 0; j < dim_; ++j) r[j] += relations.sum(k)[j];
    }
    relations.clear();
  }
  ++pass_;
  return fit;
}

Ranks SerialTranse::rank_test() const {
  Ranks ranks;
  std::vector<float> q(dim_);
  for (const Triple& t : g_.test)
    ranks += rank_triple(g_, t, r_.data() + static_cast<std::size_t>(t.relation) * dim_, o_, q.data(),
                         [&](std::int32_t e) { return e_.data() + static_cast<std::size_t>(e) * dim_; });
  return ranks;
}

}  // namespace strata::apps::transe
