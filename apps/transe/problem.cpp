#include "transe/problem.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "common/text_lines.hpp"
#include "strata/error.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/random.hpp"

namespace strata::apps::transe {

namespace {

constexpr std::uint64_t kHoldoutStream = 0x7E'A5'E0'48;  // which lines are held out
constexpr std::uint64_t kGraphStream = 0x7E'A5'E0'47;    // the generated graph

// Names to dense ids, in order of first appearance.
class Names {
 public:
  Names(std::vector<std::string>& names, std::int64_t limit, const char* what)
      : names_(names), limit_(limit), what_(what) {}
  std::int32_t id(std::string_view name, const std::string& path, std::int64_t line, std::string_view text) {
    auto [it, fresh] = ids_.try_emplace(std::string(name), static_cast<std::int32_t>(names_.size()));
    if (fresh) {
      if (static_cast<std::int64_t>(names_.size()) >= limit_)
        throw ParseError(path, line, std::string(text), fmt::format("more than {} {}", limit_, what_));
      names_.emplace_back(name);
    }
    return it->second;
  }
  // The id of a known name, or -1.
  std::int32_t find(std::string_view name) const {
    const auto it = ids_.find(std::string(name));
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  std::vector<std::string>& names_;
  std::unordered_map<std::string, std::int32_t> ids_;
  std::int64_t limit_;
  const char* what_;
};

// Calls f(line number, line, fields) for each triple line of `text` ('#' lines and
// blank ones skipped).
template <class F>
void for_each_triple(const std::string& path, std::string_view text, F&& f) {
  for_each_line(path, text, [&](std::int64_t lineno, std::string_view line) {
    std::string_view field[3];
    int n = 0;
    for_each_word(line, [&](std::string_view word) {
      if (n == 3) throw ParseError(path, lineno, std::string(line), "more than three fields (head relation tail)");
      field[n++] = word;
    });
    if (n == 0 || field[0][0] == '#') return;
    if (n != 3) throw ParseError(path, lineno, std::string(line), "a triple is three fields: head relation tail");
    f(lineno, line, field);
  });
}

}  // namespace

void Graph::remember() {
  known_tails.clear(), known_heads.clear();
  for (const auto* set : {&train, &test})
    for (const Triple& t : *set) {
      known_tails[key(t.head, t.relation)].push_back(t.tail);
      known_heads[key(t.tail, t.relation)].push_back(t.head);
    }
  for (auto* m : {&known_tails, &known_heads})
    for (auto& [k, v] : *m) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
}

bool Graph::knows(std::int32_t h, std::int32_t r, std::int32_t t) const {
  const auto it = known_tails.find(key(h, r));
  return it != known_tails.end() && std::binary_search(it->second.begin(), it->second.end(), t);
}

Ranks& Ranks::operator+=(const Ranks& o) {
  rank_sum += o.rank_sum, reciprocal_sum += o.reciprocal_sum, hits10 += o.hits10;
  raw_rank_sum += o.raw_rank_sum, raw_reciprocal_sum += o.raw_reciprocal_sum, raw_hits10 += o.raw_hits10;
  count += o.count;
  return *this;
}

Graph generate(const SyntheticSpec& s, double holdout, std::uint64_t seed) {
  Graph g;
  g.entities = s.entities;
  g.relations = s.relations;
  for (std::int32_t e = 0; e < s.entities; ++e) g.entity_names.push_back(fmt::format("e{}", e));
  for (std::int32_t r = 0; r < s.relations; ++r) g.relation_names.push_back(fmt::format("r{}", r));
  // Clusters sit on a square grid, cluster c at (c % side, c / side); entity e is in
  // cluster e % clusters. Relation r moves a cluster by its step (dx, dy), each in
  // [-2, 2] and not both 0: a translation, which TransE can model (a cyclic shift
  // could not be: translations around a cycle would sum to 0).
  RandomStream rs(seed, kGraphStream);
  const auto side = static_cast<std::int32_t>(std::ceil(std::sqrt(static_cast<double>(s.clusters))));
  std::vector<std::array<std::int32_t, 2>> step(static_cast<std::size_t>(s.relations));
  for (auto& d : step) {
    do {
      d = {static_cast<std::int32_t>(rs.below(5)) - 2, static_cast<std::int32_t>(rs.below(5)) - 2};
    } while (d[0] == 0 && d[1] == 0);
  }
  const std::int32_t per_cluster = s.entities / s.clusters;
  const CounterRng held(seed, kHoldoutStream);
  for (std::int64_t i = 0; i < s.triples; ++i) {
    std::int32_t h, r, c;
    for (;;) {  // a head whose cluster the relation moves to a cluster on the grid
      h = static_cast<std::int32_t>(rs.below(static_cast<std::uint64_t>(per_cluster * s.clusters)));
      r = static_cast<std::int32_t>(rs.below(static_cast<std::uint64_t>(s.relations)));
      const std::int32_t x = h % s.clusters % side + step[static_cast<std::size_t>(r)][0];
      const std::int32_t y = h % s.clusters / side + step[static_cast<std::size_t>(r)][1];
      c = y * side + x;
      if (x >= 0 && x < side && y >= 0 && c < s.clusters) break;
    }
    const auto t = c + s.clusters * static_cast<std::int32_t>(rs.below(static_cast<std::uint64_t>(per_cluster)));
    (held.uniform(static_cast<std::uint64_t>(i)) < holdout ? g.test : g.train).push_back({h, r, t});
  }
  g.remember();
  g.source =
      fmt::format("generated: {} entities in {} clusters on a grid, {} relations (steps on it); {} training triples",
                  s.entities, s.clusters, s.relations, g.train.size());
  return g;
}

Graph graph_from_text(const std::string& path, std::string_view text, double holdout, std::uint64_t seed) {
  Graph g;
  Names entities(g.entity_names, Graph::kMaxEntities, "entities");
  Names relations(g.relation_names, Graph::kMaxRelations, "relations");
  const CounterRng held(seed, kHoldoutStream);
  struct Held {
    std::string_view h, r, t;
  };
  std::vector<Held> held_lines;
  for_each_triple(path, text, [&](std::int64_t lineno, std::string_view line, const std::string_view* f) {
    if (held.uniform(static_cast<std::uint64_t>(lineno)) < holdout) {
      held_lines.push_back({f[0], f[1], f[2]});
      return;
    }
    g.train.push_back({entities.id(f[0], path, lineno, line), relations.id(f[1], path, lineno, line),
                       entities.id(f[2], path, lineno, line)});
  });
  if (g.train.empty()) throw ParseError(path, 0, "", "no training triple (head relation tail lines)");
  std::int64_t dropped = 0;
  for (const Held& t : held_lines) {
    const std::int32_t h = entities.find(t.h), r = relations.find(t.r), tail = entities.find(t.t);
    if (h < 0 || r < 0 || tail < 0) {
      ++dropped;
      continue;
    }
    g.test.push_back({h, r, tail});
  }
  g.entities = static_cast<std::int32_t>(g.entity_names.size());
  g.relations = static_cast<std::int32_t>(g.relation_names.size());
  g.remember();
  g.source = fmt::format("{}: {} entities, {} relations, {} training triples{}", path, g.entities, g.relations,
                         g.train.size(),
                         dropped ? fmt::format(" ({} held-out triples name what no training triple does: left out)",
                                               dropped)
                                 : std::string());
  return g;
}

Graph load_triples(const std::string& path, double holdout, std::uint64_t seed) {
  const io::MappedFile file(path);
  Graph g = graph_from_text(path, file.text(), holdout, seed);
  file.check_unchanged();
  return g;
}

void attach_test(Graph& g, const std::string& path) {
  const io::MappedFile file(path);
  std::unordered_map<std::string_view, std::int32_t> entity, relation;
  for (std::size_t e = 0; e < g.entity_names.size(); ++e)
    entity.emplace(g.entity_names[e], static_cast<std::int32_t>(e));
  for (std::size_t r = 0; r < g.relation_names.size(); ++r)
    relation.emplace(g.relation_names[r], static_cast<std::int32_t>(r));
  g.test.clear();
  for_each_triple(path, file.text(), [&](std::int64_t, std::string_view, const std::string_view* f) {
    const auto h = entity.find(f[0]), r = relation.find(f[1]), t = entity.find(f[2]);
    if (h != entity.end() && r != relation.end() && t != entity.end())
      g.test.push_back({h->second, r->second, t->second});
  });
  file.check_unchanged();
  g.remember();
}

void trim_test(Graph& g, std::int64_t n) {
  if (static_cast<std::int64_t>(g.test.size()) > n) g.test.resize(static_cast<std::size_t>(n));
}

void write_triples(const std::string& path, const Graph& g, const std::vector<Triple>& triples) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw IoError(fmt::format("{}: cannot be written", path));
  for (const Triple& t : triples)
    fmt::print(f.get(), "{} {} {}\n", g.entity_names[static_cast<std::size_t>(t.head)],
               g.relation_names[static_cast<std::size_t>(t.relation)],
               g.entity_names[static_cast<std::size_t>(t.tail)]);
  if (std::fflush(f.get()) != 0) throw IoError(fmt::format("{}: write failed", path));
}

}  // namespace strata::apps::transe
