// TransE's options and the parts of its step both programs share, so that the serial
// program and its Strata twin draw and step exactly alike.
//
// TransE (Bordes et al., 2013) embeds entities and relations in one space so that
// head + relation lies near tail: a triple's distance is |h + r - t| (L1 or L2). Each
// training triple is paired with one corrupted triple, its head or its tail (a coin
// flip) replaced by a random other entity, and takes a step on the margin loss
// max(0, margin + d(triple) - d(corrupted)). Entity rows step at once, each projected
// back into the unit ball after its step; a relation row is written by every triple of
// its relation, so its steps are summed over a mini-batch of triples and taken once a
// batch (a hot row written by every iteration is what threads sharing a model pay for
// most: issue #28). Within a batch, triples read the relation rows as the batch found
// them and the entity rows as the steps before them left them.
//
// Every draw comes from a counter-based stream keyed by the seed, the pass and the
// triple, so a triple draws the same corruption whichever worker runs it: one worker's
// run equals the serial program bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "common/batches.hpp"
#include "common/row_sums.hpp"
#include "strata/random.hpp"
#include "transe/problem.hpp"

namespace strata::apps::transe {

struct Options {
  int dim = 50;
  float margin = 1.0f;
  float lr = 0.1f;
  int norm = 2;                ///< the distance: 1 (L1) or 2 (L2)
  std::int32_t batch = 100;    ///< triples whose relation steps are summed
  std::uint64_t seed = 42;
  bool hybrid = true;          ///< Strata: Hybrid consistency (lock-free inside a rank), else SSP
  bool thread_replicas = false;  ///< Strata, Hybrid: a replica of the rows per worker thread
  int staleness = 0;
  std::int64_t clock_every = -1;  ///< batches of a worker per clock; -1: automatic
};

/// A pass's fit: the margin losses of its triples (each just before its step), and how
/// many were above 0.
struct Fit {
  double loss = 0;
  std::int64_t triples = 0, violated = 0;
  double mean() const { return triples ? loss / static_cast<double>(triples) : 0; }
};

/// Initial rows (Bordes et al.): uniform in [-6/sqrt(dim), 6/sqrt(dim)), relation rows
/// then scaled to unit L2 norm. `table` 0 is the entities', 1 the relations'.
inline std::vector<float> initial_rows(std::uint64_t seed, int table, std::int64_t rows, int dim) {
  const CounterRng rng(seed, 0x7E'A5'E0'49 + static_cast<std::uint64_t>(table));
  const double bound = 6 / std::sqrt(static_cast<double>(dim));
  std::vector<float> v(static_cast<std::size_t>(rows) * static_cast<std::size_t>(dim));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((2 * rng.uniform(k) - 1) * bound);
  if (table == 1)
    for (std::int64_t r = 0; r < rows; ++r) {
      float* row = v.data() + r * dim;
      double n = 0;
      for (int j = 0; j < dim; ++j) n += static_cast<double>(row[j]) * row[j];
      const auto scale = static_cast<float>(1 / std::sqrt(n));
      for (int j = 0; j < dim; ++j) row[j] *= scale;
    }
  return v;
}

/// The corruption of training triple i in pass `pass`: which end is replaced and by
/// which entity (never the one it replaces).
struct Corruption {
  bool head = false;
  std::int32_t entity = 0;
};
inline Corruption corrupt(std::uint64_t seed, int pass, std::int64_t i, const Triple& t, std::int32_t entities) {
  const CounterRng rng(seed, (static_cast<std::uint64_t>(pass) << 40) ^ 0x7E'A5'E0'43);
  const std::uint64_t bits = rng.bits(static_cast<std::uint64_t>(i));
  Corruption c;
  c.head = bits & 1;
  const std::int32_t replaced = c.head ? t.head : t.tail;
  // Uniform over the other entities: draw in [0, entities - 1) and skip the replaced one.
  c.entity = static_cast<std::int32_t>(((bits >> 1) % static_cast<std::uint64_t>(entities - 1)));
  if (c.entity >= replaced) ++c.entity;
  return c;
}

/// v = h + r - t, and the distance |v| (L1 or L2).
inline float difference(const float* h, const float* r, const float* t, float* v, int dim, int norm) {
  float d = 0;
  for (int j = 0; j < dim; ++j) v[j] = h[j] + r[j] - t[j];
  if (norm == 1)
    for (int j = 0; j < dim; ++j) d += std::abs(v[j]);
  else {
    for (int j = 0; j < dim; ++j) d += v[j] * v[j];
    d = std::sqrt(d);
  }
  return d;
}

/// The distance's gradient with respect to v, in place: sign(v) (L1) or v / |v| (L2).
inline void distance_gradient(float* v, float d, int dim, int norm) {
  if (norm == 1)
    for (int j = 0; j < dim; ++j) v[j] = v[j] > 0 ? 1.0f : v[j] < 0 ? -1.0f : 0.0f;
  else
    for (int j = 0; j < dim; ++j) v[j] = d > 0 ? v[j] / d : 0.0f;
}

/// The delta that takes an entity row from `row` by the step `step` and back into the
/// unit ball (L2): new = row + step, scaled to norm 1 when longer; delta = new - row.
inline void projected_delta(const float* row, const float* step, float* delta, int dim) {
  float n = 0;
  for (int j = 0; j < dim; ++j) {
    delta[j] = row[j] + step[j];
    n += delta[j] * delta[j];
  }
  const float scale = n > 1 ? 1 / std::sqrt(n) : 1.0f;
  for (int j = 0; j < dim; ++j) delta[j] = delta[j] * scale - row[j];
}

/// Up to three entity rows a triple's step moves (head, tail, the corrupting entity;
/// a row named twice takes both steps), each with its summed step.
struct EntitySteps {
  std::int32_t id[3] = {};
  int count = 0;
  std::vector<float> step;  // count x dim
  float* add(std::int32_t e, int dim) {
    for (int k = 0; k < count; ++k)
      if (id[k] == e) return step.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(dim);
    id[count] = e;
    float* s = step.data() + static_cast<std::size_t>(count++) * static_cast<std::size_t>(dim);
    std::fill(s, s + dim, 0.0f);
    return s;
  }
};

/// This thread's scratch for a triple's step, sized for `dim`. The body allocates
/// nothing per triple; a batch's relation steps are summed in the thread's RowSums
/// (common/row_sums.hpp).
struct Scratch {
  std::vector<float> pos, neg, delta;
  EntitySteps entities;
};
inline Scratch& scratch(int dim) {
  thread_local Scratch s;
  if (const auto d = static_cast<std::size_t>(dim); s.pos.size() != d) {
    s.pos.assign(d, 0.0f), s.neg.assign(d, 0.0f), s.delta.assign(d, 0.0f);
    s.entities.step.assign(3 * d, 0.0f);
  }
  return s;
}

/// One triple's step, from the rows `row(table, id)` gives (0: entities, 1: relations):
/// sums the entity steps into s.entities (the caller applies them) and the relation
/// step into `relations`. Returns the margin loss.
template <class Row>
float triple_step(const Triple& t, const Corruption& c, const Options& o, Scratch& s, RowSums& relations, Row&& row) {
  const std::int32_t h2 = c.head ? c.entity : t.head, t2 = c.head ? t.tail : c.entity;
  const float* r = row(1, t.relation);
  const float dp = difference(row(0, t.head), r, row(0, t.tail), s.pos.data(), o.dim, o.norm);
  const float dn = difference(row(0, h2), r, row(0, t2), s.neg.data(), o.dim, o.norm);
  const float loss = o.margin + dp - dn;
  s.entities.count = 0;
  if (loss <= 0) return 0;
  distance_gradient(s.pos.data(), dp, o.dim, o.norm);
  distance_gradient(s.neg.data(), dn, o.dim, o.norm);
  // loss = margin + |h + r - t| - |h2 + r - t2|: each row steps by -lr times its gradient.
  auto move = [&](std::int32_t e, float coefficient, const std::vector<float>& gradient) {
    float* step = s.entities.add(e, o.dim);
    for (int j = 0; j < o.dim; ++j) step[j] += coefficient * gradient[static_cast<std::size_t>(j)];
  };
  move(t.head, -o.lr, s.pos);
  move(t.tail, o.lr, s.pos);
  move(h2, o.lr, s.neg);
  move(t2, -o.lr, s.neg);
  for (int j = 0; j < o.dim; ++j) s.pos[static_cast<std::size_t>(j)] -= s.neg[static_cast<std::size_t>(j)];
  relations.add(t.relation, -o.lr, s.pos.data());
  return loss;
}

/// |a - b| summed (L1) and squared (L2, the ranking's order), over 8 lanes in a fixed
/// order: the loop vectorises (a running sum would not: a float sum is not reordered
/// at -O2), and both programs get the same bits. Ranking scores every entity twice a
/// held-out triple, so this is where a pass's measuring goes.
inline float l1_distance(const float* a, const float* b, int n) {
  float lane[8] = {};
  int j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) lane[k] += std::abs(a[j + k] - b[j + k]);
  float d = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (; j < n; ++j) d += std::abs(a[j] - b[j]);
  return d;
}
inline float l2_squared(const float* a, const float* b, int n) {
  float lane[8] = {};
  int j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) lane[k] += (a[j + k] - b[j + k]) * (a[j + k] - b[j + k]);
  float d = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (; j < n; ++j) d += (a[j] - b[j]) * (a[j] - b[j]);
  return d;
}

/// Held-out triple t's ranks, its tail among all entities as tails of (head, relation)
/// and its head among all as heads, from the entity rows `entity(e)` and its relation
/// row. `q` is room for dim floats.
template <class Entity>
Ranks rank_triple(const Graph& g, const Triple& t, const float* relation, const Options& o, float* q,
                  Entity&& entity) {
  Ranks out;
  auto distance = [&](const float* e) { return o.norm == 1 ? l1_distance(q, e, o.dim) : l2_squared(q, e, o.dim); };
  for (const bool tail : {true, false}) {
    // Tails: |h + r - e| = |q - e| with q = h + r; heads: |e + r - t| = |e - q| with q = t - r.
    const float* given = entity(tail ? t.head : t.tail);
    for (int j = 0; j < o.dim; ++j) q[j] = tail ? given[j] + relation[j] : given[j] - relation[j];
    const std::int32_t truth = tail ? t.tail : t.head;
    const float d_true = distance(entity(truth));
    double above = 0;  // competitors closer, ties counting half
    for (std::int32_t e = 0; e < g.entities; ++e) {
      const float d = distance(entity(e));
      above += d < d_true ? 1.0 : d == d_true && e != truth ? 0.5 : 0.0;
    }
    // Filtered: the other known triples' entities among them do not count.
    double known_above = 0;
    const auto& known = tail ? g.known_tails : g.known_heads;
    if (const auto it = known.find(tail ? Graph::key(t.head, t.relation) : Graph::key(t.tail, t.relation));
        it != known.end())
      for (const std::int32_t e : it->second) {
        if (e == truth) continue;
        const float d = distance(entity(e));
        known_above += d < d_true ? 1.0 : d == d_true ? 0.5 : 0.0;
      }
    const double above_filtered = above - known_above;
    const double rank = 1 + above_filtered, raw = 1 + above;
    out.rank_sum += rank, out.reciprocal_sum += 1 / rank, out.hits10 += rank <= 10;
    out.raw_rank_sum += raw, out.raw_reciprocal_sum += 1 / raw, out.raw_hits10 += raw <= 10;
    ++out.count;
  }
  return out;
}

}  // namespace strata::apps::transe
