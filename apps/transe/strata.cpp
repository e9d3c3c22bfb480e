// TransE on Strata: serial.cpp with the entity and relation rows DistArrays written
// through Buffers a row at a time and the loop over batches a parallel_for. Kept line
// for line alike with serial.cpp.
#include "transe/strata.hpp"

#include <array>

#include "common/auto_clock.hpp"

namespace strata::apps::transe {

// One body call's readers and writers (each taken once per call).
struct StrataTranse::Access {
  ArrayReader<float, 2> e, r;
  BufferWriter<Buffer<float, 2>> e_sum, r_sum;
  explicit Access(const StrataTranse& m)
      : e(m.e_.reader()), r(m.r_.reader()), e_sum(m.e_sum_->writer()), r_sum(m.r_sum_->writer()) {}
  const float* row(int table, std::int32_t id) const { return (table == 0 ? e : r).read_row(id).data(); }
};

StrataTranse::StrataTranse(Runtime& rt, const Graph& graph, const Options& options, const LoopOptions& loop)
    : rt_(rt), g_(graph), o_(options), loop_(loop), dim_(static_cast<std::size_t>(options.dim)),
      B_(array_of(rt, batches(static_cast<std::int64_t>(graph.train.size()), options.batch))),
      T_(array_of(rt, graph.test)),
      e_(array_from(rt, initial_rows(options.seed, 0, graph.entities, options.dim),
                    Shape<2>{graph.entities, options.dim})),
      r_(array_from(rt, initial_rows(options.seed, 1, graph.relations, options.dim),
                    Shape<2>{graph.relations, options.dim})),
      pass_loss_(rt), pass_violated_(rt) {
  e_.set_name("entities");
  r_.set_name("relations");
  o_.clock_every = clock_for(graph, options, rt.size(), rt.threads());
  Consistency c = o_.hybrid ? hybrid() : ssp(o_.staleness);
  c.every(o_.clock_every);
  if (o_.thread_replicas) c.replica_per_thread();
  e_sum_ = std::make_unique<Buffer<float, 2>>(e_, apply::sum(), c);
  r_sum_ = std::make_unique<Buffer<float, 2>>(r_, apply::sum(), c);
}

std::int64_t StrataTranse::clock_for(const Graph& g, const Options& o, int ranks, int threads) {
  if (o.clock_every >= 0) return o.clock_every;
  const bool replicas = replicas_per_thread(o.thread_replicas, threads);
  if (ranks == 1 && o.hybrid && !replicas) return 0;  // the rank's threads share the rows
  const std::int64_t batches_total = (static_cast<std::int64_t>(g.train.size()) + o.batch - 1) / o.batch;
  // A replica per thread merges in memory, so it can clock as often as word2vec's do:
  // every relation row is written by every batch, and ten clocks a pass let a thread
  // take a tenth of a pass of steps from a stale relation row (held-out mean rank 27
  // against serial's 18 on the CLI test's graph).
  const std::int64_t per_pass = replicas && ranks == 1 ? 100 : 10;
  return std::max<std::int64_t>(1, batches_total / (static_cast<std::int64_t>(ranks) * threads) / per_pass);
}

Fit StrataTranse::pass() {
  auto body = [&](const Index<1>&, const Batch& b) {
    const Access a(*this);
    Scratch& s = scratch(o_.dim);
    RowSums& relations = thread_row_sums(g_.relations, dim_);
    Fit fit;
    for (std::int64_t i = b.first; i < b.first + b.count; ++i) {
      const Triple& t = g_.train[static_cast<std::size_t>(i)];
      const Corruption c = corrupt(o_.seed, pass_, i, t, g_.entities);
      const float loss =
          triple_step(t, c, o_, s, relations, [&](int table, std::int32_t id) { return a.row(table, id); });
      fit.loss += loss, ++fit.triples, fit.violated += loss > 0;
      for (int k = 0; k < s.entities.count; ++k) {
        const float* e = a.row(0, s.entities.id[k]);
        projected_delta(e, s.entities.step.data() + static_cast<std::size_t>(k) * dim_, s.delta.data(), o_.dim);
        a.e_sum.add_row(s.entities.id[k], std::span<const float>(s.delta.data(), dim_));
      }
    }
    for (std::size_t k = 0; k < relations.rows().size(); ++k) a.r_sum.add_row(relations.rows()[k], relations.sum(k));
    relations.clear();
    pass_loss_ += fit.loss;
    pass_violated_ += fit.violated;
  };
  report_ = run_or_explain(explaining_, B_, body, loop_);
  if (!explaining_) ++pass_;
  Fit f;
  f.loss = pass_loss_.take();
  f.violated = pass_violated_.take();
  f.triples = static_cast<std::int64_t>(g_.train.size());
  return f;
}

Ranks StrataTranse::rank_test() {
  // A sum per figure (Accumulators hold numbers).
  std::array<Accumulator<double>, 6> sums{Accumulator<double>(rt_), Accumulator<double>(rt_), Accumulator<double>(rt_),
                                          Accumulator<double>(rt_), Accumulator<double>(rt_), Accumulator<double>(rt_)};
  Accumulator<std::int64_t> count(rt_);
  run_or_explain(explaining_, T_, [&](const Index<1>&, const Triple& t) {
    const auto e = e_.reader();
    const auto r = r_.reader();
    thread_local std::vector<float> q;
    q.resize(dim_);
    const Ranks k = rank_triple(g_, t, r.read_row(t.relation).data(), o_, q.data(),
                                [&](std::int32_t id) { return e.read_row(id).data(); });
    sums[0] += k.rank_sum, sums[1] += k.reciprocal_sum, sums[2] += k.hits10;
    sums[3] += k.raw_rank_sum, sums[4] += k.raw_reciprocal_sum, sums[5] += k.raw_hits10;
    count += k.count;
  }, LoopOptions{});
  Ranks all;
  all.rank_sum = sums[0].take(), all.reciprocal_sum = sums[1].take(), all.hits10 = sums[2].take();
  all.raw_rank_sum = sums[3].take(), all.raw_reciprocal_sum = sums[4].take(), all.raw_hits10 = sums[5].take();
  all.count = count.take();
  return all;
}

void StrataTranse::explain() {
  explaining_ = true;
  pass();
  rank_test();
  explaining_ = false;
}

}  // namespace strata::apps::transe
