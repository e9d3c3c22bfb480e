#include "strata/analysis/dependence.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata::analysis {

std::string DependenceVector::describe() const {
  std::string out = "(";
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (k > 0) out += ", ";
    out += d[k].infinite ? std::string("*") : fmt::to_string(d[k].value);
  }
  return out + ")";
}

std::size_t DependenceVector::leading() const {
  std::size_t k = 0;
  while (k < d.size() && d[k].is_zero()) ++k;
  return k;
}

DependenceVector::Sign DependenceVector::component_sign(std::size_t k) const {
  if (d[k].is_zero()) return Sign::zero;
  const std::size_t lead = leading();
  if (k == lead && d[k].infinite)
    return Sign::non_negative;  // only the order with d[k] >= 0 is real
  if (d[lead].infinite || d[k].infinite)
    return Sign::unknown;  // either order of the two iterations
  return d[k].value > 0 ? Sign::non_negative : Sign::negative;
}

namespace {

const char* kind_name(AccessKind k) {
  switch (k) {
    case AccessKind::read:
      return "read";
    case AccessKind::write:
      return "write";
    case AccessKind::read_write:
      return "read-write";
  }
  return "?";
}

// Whether executing a in one iteration and b in another can conflict at all: one of
// them writes and the other reads, or (ordered loops only) both write.
bool may_conflict(const Reference& a, const Reference& b, bool ordered) {
  const auto one_way = [ordered](const Reference& w, const Reference& o) {
    return w.writes() && (o.reads() || (ordered && o.writes()));
  };
  return one_way(a, b) || one_way(b, a);
}

bool is_irregular(const Subscript& s) {
  return s.kind == Subscript::Kind::irregular || s.kind == Subscript::Kind::unseen;
}

// The outcome of testing one pair of references: independent, or the raw vector
// before normalisation, and whether an irregular subscript left part of it unknown.
struct PairTest {
  bool independent = false;
  bool irregular = false;
  std::vector<Distance> d;
};

PairTest test_pair(const Reference& a, const Reference& b, int iter_dims) {
  if (a.subs.size() != b.subs.size())
    throw ShapeError(fmt::format("array {} has {} subscripts at {} but {} at {}", a.array_name,
                                 a.subs.size(), a.site, b.subs.size(), b.site));
  PairTest t;
  t.d.assign(static_cast<std::size_t>(iter_dims), Distance::any());
  for (std::size_t dim = 0; dim < a.subs.size(); ++dim) {
    const Subscript& sa = a.subs[dim];
    const Subscript& sb = b.subs[dim];
    for (const Reference* r : {&a, &b}) {
      const Subscript& s = r->subs[dim];
      if (s.kind == Subscript::Kind::affine && (s.iter_dim < 0 || s.iter_dim >= iter_dims))
        throw ShapeError(
            fmt::format("subscript {} of {} at {} follows iteration dimension {}, the loop has {}",
                        dim, r->array_name, r->site, s.iter_dim, iter_dims));
    }
    if (is_irregular(sa) || is_irregular(sb)) {
      t.irregular = true;  // no constraint: the elements may meet anywhere
      continue;
    }
    using K = Subscript::Kind;
    if (sa.kind == K::affine && sb.kind == K::affine && sa.iter_dim == sb.iter_dim) {
      Distance& dk = t.d[static_cast<std::size_t>(sa.iter_dim)];
      const Distance dist = Distance::exactly(sa.offset - sb.offset);
      if (!dk.infinite && dk != dist) {  // p[k] would need two different distances at once
        t.independent = true;
        return t;
      }
      dk = dist;
    } else if (sa.kind == K::constant && sb.kind == K::constant && sa.offset != sb.offset) {
      t.independent = true;
      return t;
    }
    // Otherwise (whole, equal constants, affine on different dimensions, affine
    // against constant) the pair meets for some iterations: no constraint.
  }
  return t;
}

// Makes `d` lexicographically positive in the sense documented on DependenceVector.
// Returns false for the zero vector (the same iteration: no loop-carried dependence).
bool normalise(std::vector<Distance>& d) {
  auto first_nonzero_finite = [&](std::size_t from) {
    while (from < d.size() && (d[from].infinite || d[from].value == 0)) ++from;
    return from;
  };
  std::size_t lead = 0;
  while (lead < d.size() && d[lead].is_zero()) ++lead;
  if (lead == d.size()) return false;
  // A positive leading number fixes the direction; after a leading "*" the numbers are
  // known only up to a common sign, stored with the first one positive.
  const std::size_t pivot = d[lead].infinite ? first_nonzero_finite(lead) : lead;
  if (pivot < d.size() && d[pivot].value < 0)
    for (Distance& x : d)
      if (!x.infinite) x.value = -x.value;
  return true;
}

// Calls f(i, j, test) for every pair i <= j that may conflict and is not proved
// independent.
template <class F>
void for_each_dependent_pair(const std::vector<Reference>& refs, int iter_dims, bool ordered,
                             F&& f) {
  if (iter_dims < 0)
    throw ShapeError(fmt::format("dependence analysis: negative iteration rank {}", iter_dims));
  for (std::size_t i = 0; i < refs.size(); ++i) {
    for (std::size_t j = i; j < refs.size(); ++j) {
      const Reference& a = refs[i];
      const Reference& b = refs[j];
      if (a.array != b.array || !may_conflict(a, b, ordered)) continue;
      PairTest t = test_pair(a, b, iter_dims);
      if (!t.independent) f(i, j, t);
    }
  }
}

}  // namespace

std::vector<DependenceVector> dependence_vectors(const std::vector<Reference>& refs, int iter_dims,
                                                 bool ordered) {
  std::vector<DependenceVector> out;
  for_each_dependent_pair(refs, iter_dims, ordered, [&](std::size_t i, std::size_t j, PairTest& t) {
    if (!normalise(t.d)) return;
    if (std::any_of(out.begin(), out.end(), [&](const DependenceVector& v) { return v.d == t.d; }))
      return;
    const Reference& a = refs[i];
    const Reference& b = refs[j];
    DependenceVector v;
    v.d = std::move(t.d);
    v.ref_a = static_cast<int>(i);
    v.ref_b = static_cast<int>(j);
    v.source = i == j ? fmt::format("{} ({} at {}, in two iterations)", a.array_name,
                                    kind_name(a.kind), a.site)
                      : fmt::format("{} ({} at {}, {} at {})", a.array_name, kind_name(a.kind),
                                    a.site, kind_name(b.kind), b.site);
    out.push_back(std::move(v));
  });
  return out;
}

bool has_irregular(const std::vector<Reference>& refs, int iter_dims, bool ordered) {
  bool irregular = false;
  for_each_dependent_pair(
      refs, iter_dims, ordered, [&](std::size_t, std::size_t, const PairTest& t) {
        // A pair that can only meet within one iteration does not matter.
        const bool carried =
            std::any_of(t.d.begin(), t.d.end(), [](const Distance& x) { return !x.is_zero(); });
        irregular = irregular || (t.irregular && carried);
      });
  return irregular;
}

}  // namespace strata::analysis
