// TransE's data, shared by the serial program and its Strata twin: a knowledge graph
// as (head, relation, tail) triples over numbered entities and relations, read from a
// text file or generated from planted clusters (so quality has a ground truth), and
// the link-prediction measures (mean rank, MRR, hits@10; raw and filtered) that need
// the whole model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::apps::transe {

struct Triple {
  std::int32_t head = 0, relation = 0, tail = 0;
};

struct Graph {
  std::int32_t entities = 0, relations = 0;
  std::vector<Triple> train, test;
  std::vector<std::string> entity_names, relation_names;  ///< by id
  std::string source;                                      ///< one line: where the graph came from
  /// Every known triple (training and held out), as the tails each (head, relation)
  /// has and the heads each (relation, tail) has: a held-out triple's filtered rank
  /// leaves these competitors out, and it looks at them alone, not at every closer
  /// entity.
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> known_tails, known_heads;
  /// Entities fit 26 bits and relations 12 (the loaders refuse more).
  static constexpr std::int64_t kMaxEntities = std::int64_t{1} << 26, kMaxRelations = 1 << 12;
  static std::uint64_t key(std::int32_t entity, std::int32_t relation) {
    return static_cast<std::uint64_t>(entity) << 12 | static_cast<std::uint64_t>(relation);
  }
  /// Whether (h, r, t) is a known triple.
  bool knows(std::int32_t h, std::int32_t r, std::int32_t t) const;
  /// Rebuilds known_tails and known_heads from the training and held-out triples.
  void remember();
};

/// What --synthetic takes: entities in `clusters` clusters on a square grid; relation
/// r moves a cluster by its own step on the grid (drawn once), and a triple of r links
/// an entity to a random entity of the cluster its step reaches. A translation per
/// relation models it exactly, so a good embedding ranks a held-out tail among its
/// cluster's entities (raw hits@10 about 10 / entities per cluster).
struct SyntheticSpec {
  std::int32_t entities = 10000;
  std::int32_t relations = 20;
  std::int32_t clusters = 400;
  std::int64_t triples = 200000;
};

/// Generates `spec`'s graph, `holdout` of its triples held out. Every rank generates
/// the same graph.
Graph generate(const SyntheticSpec& spec, double holdout, std::uint64_t seed);

/// A text file of triples, "head relation tail" a line (whitespace-separated names;
/// blank lines and lines starting with '#' skipped). Lines chosen by the seed, a
/// `holdout` share of them, are held out; held-out triples whose head or tail no
/// training triple names are dropped (counted in `source`). IoError for an unreadable
/// file, ParseError naming the line for a line of other than three fields.
Graph load_triples(const std::string& path, double holdout, std::uint64_t seed);
Graph graph_from_text(const std::string& path, std::string_view text, double holdout, std::uint64_t seed);

/// Replaces the held-out triples by those of the file `path` (same format; triples
/// naming an entity or relation the training triples do not are dropped).
void attach_test(Graph& g, const std::string& path);

/// Keeps the first `n` held-out triples: ranking one scores every entity twice.
void trim_test(Graph& g, std::int64_t n);

/// Link prediction over held-out triples: each triple's tail ranked among all entities
/// as tails of (head, relation), and its head among all as heads; "filtered" leaves
/// the other known triples out of the competitors. Ranks from 1 (ties count half).
struct Ranks {
  double rank_sum = 0, reciprocal_sum = 0, hits10 = 0;           ///< filtered
  double raw_rank_sum = 0, raw_reciprocal_sum = 0, raw_hits10 = 0;
  std::int64_t count = 0;                                        ///< ranks taken (2 per triple)
  Ranks& operator+=(const Ranks& o);
  double mean_rank() const { return count ? rank_sum / static_cast<double>(count) : 0; }
  double mrr() const { return count ? reciprocal_sum / static_cast<double>(count) : 0; }
  double hits_at_10() const { return count ? hits10 / static_cast<double>(count) : 0; }
  double raw_mean_rank() const { return count ? raw_rank_sum / static_cast<double>(count) : 0; }
  double raw_hits_at_10() const { return count ? raw_hits10 / static_cast<double>(count) : 0; }
};

/// Writes the graph's triples as text, "head relation tail" a line, by name.
void write_triples(const std::string& path, const Graph& g, const std::vector<Triple>& triples);

}  // namespace strata::apps::transe
