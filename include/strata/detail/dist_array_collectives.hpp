// Out-of-class definitions of DistArray's creation and its collective operations
// (map, repartition, randomize, gather): the typed steps, over the byte-level movement
// of src/array. Included at the end of dist_array.hpp.
#pragma once

namespace strata {

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::fill(Runtime& rt, const Shape<N>& shape, const T& value,
                      const Partition& p) {
  DistArray a(rt, shape, p, false);
  a.allocate_dense();
  std::fill(a.dense_.begin(), a.dense_.end(), value);
  return a;
}

template <class T, std::size_t N>
template <class F>
DistArray<T, N> DistArray<T, N>::generate(Runtime& rt, const Shape<N>& shape, F&& f, const Partition& p) {
  DistArray a(rt, shape, p, false);
  a.allocate_dense();
  a.parallel_local([&](std::int64_t k, const Index<N>& i) { a.dense_[static_cast<std::size_t>(k)] = f(i); });
  return a;
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::rand(Runtime& rt, const Shape<N>& shape, double lo, double hi,
                      const Partition& p, std::optional<std::uint64_t> seed) {
  static_assert(ElementTraits<T>::random_fillable, "rand needs arithmetic elements or arrays of them");
  const CounterRng rng(seed ? *seed : rt.next_seed());
  return random_fill(rt, shape, p, [&](std::uint64_t c) { return lo + (hi - lo) * rng.uniform(c); });
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::randn(Runtime& rt, const Shape<N>& shape, double stddev, double mean,
                       const Partition& p, std::optional<std::uint64_t> seed) {
  static_assert(ElementTraits<T>::random_fillable, "randn needs arithmetic elements or arrays of them");
  const CounterRng rng(seed ? *seed : rt.next_seed());
  return random_fill(rt, shape, p, [&](std::uint64_t c) { return mean + stddev * rng.normal(c); });
}

template <class T, std::size_t N>
std::vector<Entry<T, N>> DistArray<T, N>::local_entries() const {
  std::vector<entry_type> out;
  out.reserve(static_cast<std::size_t>(local_nnz()));
  for_each_local([&](const Index<N>& i, const T& v) { out.push_back({i, v}); });
  return out;
}

template <class T, std::size_t N>
template <class F>
void DistArray<T, N>::parallel_local(F&& f) {
  const std::int64_t n = local_box_volume();
  std::array<std::int64_t, N> sizes{};
  for (std::size_t d = 0; d < N; ++d) sizes[d] = box_[d].size();
  rt_->pool().run_chunks(n, 1 << 14, [&](std::int64_t b, std::int64_t e, int) {
    for (std::int64_t k = b; k < e; ++k) {
      Index<N> i{};
      std::int64_t rest = k;
      for (std::size_t d = N; d-- > 0;) {
        i[d] = box_[d].global(rest % sizes[d]);
        rest /= sizes[d];
      }
      f(k, i);
    }
  });
}

template <class T, std::size_t N>
template <class Draw>
DistArray<T, N> DistArray<T, N>::random_fill(Runtime& rt, const Shape<N>& shape, const Partition& p, Draw&& draw) {
  using Tr = ElementTraits<T>;
  return generate(rt, shape, [&](const Index<N>& i) {
    T v{};
    const auto base = static_cast<std::uint64_t>(linearize(i, shape)) * Tr::components;
    for (std::size_t c = 0; c < Tr::components; ++c)
      Tr::set(v, c, static_cast<typename Tr::scalar>(draw(base + c)));
    return v;
  }, p);
}

template <class T, std::size_t N>
template <class F>
auto DistArray<T, N>::map(F&& f) const {
  using U = std::remove_cvref_t<decltype(call_map(f, std::declval<const Index<N>&>(), std::declval<const T&>()))>;
  DistArray<U, N> out;
  out.rt_ = rt_;
  out.shape_ = shape_;
  out.dist_ = dist_;
  out.box_ = box_;
  out.sparse_ = sparse_;
  out.global_nnz_ = global_nnz_;
  out.recompute_strides();
  if (sparse_) {
    out.keys_ = keys_;
    out.values_.resize(values_.size());
    rt_->pool().run_chunks(static_cast<std::int64_t>(keys_.size()), 4096, [&](std::int64_t b, std::int64_t e, int) {
      for (auto k = static_cast<std::size_t>(b); k < static_cast<std::size_t>(e); ++k)
        out.values_[k] = call_map(f, keys_[k], values_[k]);
    });
  } else {
    out.dense_ = detail::DenseStorage<U>(dense_.size());
    const_cast<DistArray*>(this)->parallel_local([&](std::int64_t k, const Index<N>& i) {
      out.dense_[static_cast<std::size_t>(k)] = call_map(f, i, dense_[static_cast<std::size_t>(k)]);
    });
  }
  return out;
}

template <class T, std::size_t N>
void DistArray<T, N>::repartition(const Partition& p) {
  Distribution next(p, shape_vector(), rt_->size());
  if (next == dist_) return;
  if (sparse_) {
    std::vector<entry_type> mine = local_entries();
    const detail::AnonymousArrays temporary;
    DistArray moved(*rt_, shape_, p, true);
    moved.absorb_entries(moved.route_entries(std::move(mine)), Duplicates::first);
    *this = std::move(moved);
    return;
  }
  const Distribution old = dist_;
  const detail::DenseStorage<T> mine = std::move(dense_);
  const detail::DensePiece piece{rt_->rank(), std::as_bytes(std::span<const T>(mine))};
  const detail::AnonymousArrays temporary;
  *this = assemble_dense(*rt_, shape_, p, std::span(&piece, 1),
                         [&](std::int64_t r) { return old.box(static_cast<int>(r)); });
}

template <class T, std::size_t N>
std::vector<std::vector<std::int64_t>> DistArray<T, N>::randomize(const std::vector<int>& dimensions,
                                                 std::optional<std::uint64_t> seed) {
  const std::uint64_t s = seed ? *seed : rt_->next_seed();
  std::vector<std::vector<std::int64_t>> perms;
  std::array<const std::vector<std::int64_t>*, N> by_dim{};
  for (int d : dimensions) {
    if (d < 0 || d >= static_cast<int>(N))
      throw ShapeError(fmt::format("randomize: dimension {} does not exist in a {}-D array", d, N));
    perms.push_back(random_permutation(shape_[static_cast<std::size_t>(d)], s, static_cast<std::uint64_t>(d)));
  }
  for (std::size_t k = 0; k < dimensions.size(); ++k) by_dim[static_cast<std::size_t>(dimensions[k])] = &perms[k];
  std::vector<entry_type> moved = local_entries();
  for (auto& e : moved)
    for (std::size_t d = 0; d < N; ++d)
      if (by_dim[d]) e.index[d] = (*by_dim[d])[static_cast<std::size_t>(e.index[d])];
  if (sparse_)
    *this = sparse(*rt_, shape_, std::move(moved), Duplicates::error, dist_.partition());
  else
    *this = dense_from_entries(*rt_, shape_, moved, dist_.partition());
  return perms;
}

template <class T, std::size_t N>
std::vector<T> DistArray<T, N>::gather() const {
  if (sparse_) throw ShapeError("gather() needs a dense array; use gather_entries()");
  std::vector<T> out(static_cast<std::size_t>(volume(shape_)));
  detail::gather_dense(rt_->comm(), dist_, std::as_bytes(std::span<const T>(dense_)), sizeof(T),
                       std::as_writable_bytes(std::span<T>(out)));
  return out;
}

template <class T, std::size_t N>
std::vector<Entry<T, N>> DistArray<T, N>::gather_entries() const {
  Bytes mine;
  const auto local = local_entries();
  detail::append_span<entry_type>(mine, local);
  std::vector<entry_type> out;
  for (const auto& part : rt_->comm().allgatherv(mine)) {
    const auto v = detail::as_vector<entry_type>(part);
    out.insert(out.end(), v.begin(), v.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

template <class T, std::size_t N>
std::vector<std::int64_t> DistArray<T, N>::random_permutation(std::int64_t n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) perm[static_cast<std::size_t>(k)] = k;
  RandomStream rs(seed, stream);
  for (std::int64_t k = n - 1; k > 0; --k)
    std::swap(perm[static_cast<std::size_t>(k)], perm[rs.below(static_cast<std::uint64_t>(k + 1))]);
  return perm;
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::sparse(Runtime& rt, const Shape<N>& shape, std::vector<entry_type> entries,
                        Duplicates dup, const Partition& p) {
  DistArray a(rt, shape, p, true);
  check_in_bounds(rt, shape, entries, "sparse");
  a.absorb_entries(a.route_entries(std::move(entries)), dup);
  return a;
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::dense_from_entries(Runtime& rt, const Shape<N>& shape, const std::vector<entry_type>& entries,
                                    const Partition& p) {
  DistArray a(rt, shape, p, false);
  check_in_bounds(rt, shape, entries, "dense_from_entries");
  a.allocate_dense();
  for (const auto& e : a.route_entries(entries)) a.dense_[static_cast<std::size_t>(a.local_offset(e.index))] = e.value;
  return a;
}

template <class T, std::size_t N>
std::vector<std::int64_t> DistArray<T, N>::histogram(int dim, std::int64_t bins) const {
  if (dim < 0 || dim >= static_cast<int>(N))
    throw ShapeError(fmt::format("histogram: dimension {} does not exist in a {}-D array", dim, N));
  if (sparse_)
    return detail::histogram_of_keys(rt_->comm(), keys_.column(), shape_vector(), dim, bins);
  return detail::histogram_of_box(rt_->comm(), box_, shape_vector(), dim, bins);
}

}  // namespace strata
