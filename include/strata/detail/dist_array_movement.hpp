// Out-of-class definitions of DistArray's data movement: routing entries to their
// owners, sorting and merging what arrives, assembling dense pieces, and the
// travelling layout 2-D loops use. Included at the end of dist_array.hpp.
#pragma once

namespace strata {

template <class T, std::size_t N>
void DistArray<T, N>::travel_begin() {
  if (sparse_)
    throw ShapeError(fmt::format("array {}: only dense arrays can travel between ranks", name()));
  travel_partition_ = dist_.partition();
  travel_version_ = structure_version();
  std::vector<T> full = gather();
  dense_ = std::move(full);
  for (std::size_t d = 0; d < N; ++d) box_[d] = IndexSet::range(0, shape_[d]);
  recompute_strides();
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_end(const std::vector<std::int64_t>& rows,
                                 const std::vector<int>& held) {
  const std::int64_t row_elems = shape_[0] > 0 ? volume(shape_) / shape_[0] : 0;
  std::vector<std::pair<std::int64_t, std::vector<T>>> pieces;
  for (int b : held) {
    const auto begin = static_cast<std::size_t>(rows[static_cast<std::size_t>(b)] * row_elems);
    const auto end = static_cast<std::size_t>(rows[static_cast<std::size_t>(b) + 1] * row_elems);
    pieces.emplace_back(b, std::vector<T>(dense_.begin() + static_cast<std::ptrdiff_t>(begin),
                                          dense_.begin() + static_cast<std::ptrdiff_t>(end)));
  }
  dense_ = {};
  const Shape<N> shape = shape_;
  const detail::AnonymousArrays temporary;
  *this = assemble_dense(*rt_, shape, travel_partition_, pieces, [&](std::int64_t b) {
    std::vector<IndexSet> box;
    for (auto e : shape) box.push_back(IndexSet::range(0, e));
    box[0] =
        IndexSet::range(rows[static_cast<std::size_t>(b)], rows[static_cast<std::size_t>(b) + 1]);
    return box;
  });
  // Back in the partition it had before travelling: the same structure, so plans
  // that use this array stay valid.
  restore_structure_version(travel_version_);
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_drop() {
  const std::vector<T> full = std::move(dense_);
  const detail::AnonymousArrays temporary;
  DistArray mine(*rt_, shape_, travel_partition_, false);
  mine.allocate_dense();
  std::vector<IndexSet> whole;
  for (const auto e : shape_) whole.push_back(IndexSet::range(0, e));
  const detail::BoxOverlap<N> ov(whole, mine.box_);
  ov.for_each([&](std::int64_t src, std::int64_t dst) {
    mine.dense_[static_cast<std::size_t>(dst)] = full[static_cast<std::size_t>(src)];
  });
  *this = std::move(mine);
  restore_structure_version(travel_version_);
}

template <class T, std::size_t N>
std::vector<Entry<T, N>> DistArray<T, N>::route_entries(std::vector<Entry<T, N>> entries) const {
  const int P = rt_->size();
  std::vector<entry_type> out;
  if (P == 1) return entries;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(P), 0);
  std::vector<int> owner(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    owner[k] = dist_.owner(entries[k].index.data());
    ++counts[static_cast<std::size_t>(owner[k])];
  }
  std::vector<Bytes> send(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r)
    send[static_cast<std::size_t>(r)].reserve(
        static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]) * sizeof(entry_type));
  for (std::size_t k = 0; k < entries.size(); ++k)
    detail::append(send[static_cast<std::size_t>(owner[k])], entries[k]);
  entries = {};  // release before receiving: loads are memory-bound
  auto recv = rt_->comm().alltoallv(send);
  send = {};
  std::size_t total = 0;
  for (const auto& part : recv) total += part.size() / sizeof(entry_type);
  out.resize(total);
  std::size_t at = 0;
  for (auto& part : recv) {
    if (!part.empty()) std::memcpy(static_cast<void*>(out.data() + at), part.data(), part.size());
    at += part.size() / sizeof(entry_type);
    part = {};
  }
  return out;
}

template <class T, std::size_t N>
void DistArray<T, N>::absorb_entries(std::vector<Entry<T, N>> in, Duplicates dup) {
  keys_.clear();
  values_.clear();
  // A duplicate found on one rank must stop every rank, not leave them waiting.
  detail::all_or_none(rt_->comm(), [&] {
    long double vol = 1;
    for (auto e : shape_) vol *= static_cast<long double>(std::max<std::int64_t>(e, 1));
    if (vol < 0x1p63L) {
      // Radix sort on the row-major position (it fits in 64 bits almost always).
      auto items = detail::make_huge<detail::KeyedValue<T>>(in.size());
      for (std::size_t k = 0; k < in.size(); ++k)
        items[k] = {static_cast<std::uint64_t>(linearize(in[k].index, shape_)), in[k].value};
      in = {};
      detail::radix_sort(items);
      store_sorted(
          items.size(), [&](std::size_t k) { return k > 0 && items[k].key == items[k - 1].key; },
          [&](std::size_t k) {
            return delinearize(static_cast<std::int64_t>(items[k].key), shape_);
          },
          [&](std::size_t k) -> const T& { return items[k].value; }, dup);
    } else {
      std::stable_sort(in.begin(), in.end(),
                       [](const auto& a, const auto& b) { return a.index < b.index; });
      store_sorted(
          in.size(), [&](std::size_t k) { return k > 0 && in[k].index == in[k - 1].index; },
          [&](std::size_t k) { return in[k].index; },
          [&](std::size_t k) -> const T& { return in[k].value; }, dup);
    }
  });
  global_nnz_ = rt_->comm().allreduce(static_cast<std::int64_t>(keys_.size()), ReduceOp::sum);
}

template <class T, std::size_t N>
template <class SameAsPrevious, class KeyAt, class ValueAt>
void DistArray<T, N>::store_sorted(std::size_t n, SameAsPrevious same_as_previous, KeyAt key_at,
                                   ValueAt value_at, Duplicates dup) {
  detail::reserve_huge(keys_, n);
  detail::reserve_huge(values_, n);
  for (std::size_t k = 0; k < n; ++k) {
    if (same_as_previous(k)) {
      switch (dup) {
        case Duplicates::error:
          throw ShapeError(fmt::format("index {} appears more than once", to_string(key_at(k))));
        case Duplicates::sum:
          if constexpr (requires(T a, T b) { a += b; })
            values_.back() += value_at(k);
          else
            throw ShapeError("Duplicates::sum needs an element type with +=");
          break;
        case Duplicates::first:
          break;
        case Duplicates::last:
          values_.back() = value_at(k);
          break;
      }
      continue;
    }
    const Index<N> i = key_at(k);
    keys_.push_back(i);
    values_.push_back(value_at(k));
  }
}

template <class T, std::size_t N>
void DistArray<T, N>::receive_pieces(
    const std::vector<std::pair<std::int64_t, std::vector<T>>>& pieces,
    const std::function<std::vector<IndexSet>(std::int64_t)>& box_of) {
  const int P = rt_->size();
  std::vector<Bytes> send(static_cast<std::size_t>(P));
  for (const auto& [id, data] : pieces) {
    const auto src_box = box_of(id);
    for (int r = 0; r < P; ++r) {
      const auto dst_box = dist_.box(r);
      const detail::BoxOverlap<N> ov(src_box, dst_box);
      if (ov.empty()) continue;
      Bytes& out = send[static_cast<std::size_t>(r)];
      detail::append(out, id);
      const std::size_t at = out.size();
      out.resize(at + static_cast<std::size_t>(ov.volume()) * sizeof(T));
      T* dst = reinterpret_cast<T*>(out.data() + at);
      ov.for_each([&](std::int64_t src_pos, std::int64_t) {
        *dst++ = data[static_cast<std::size_t>(src_pos)];
      });
    }
  }
  const auto recv = rt_->comm().alltoallv(send);
  for (const auto& buf : recv) {
    detail::Reader in(buf);
    while (in.remaining() > 0) {
      const auto id = in.get<std::int64_t>();
      const detail::BoxOverlap<N> ov(box_of(id), box_);
      std::vector<T> values(static_cast<std::size_t>(ov.volume()));
      in.get_span(std::span(values));
      std::size_t k = 0;
      ov.for_each([&](std::int64_t, std::int64_t dst_pos) {
        dense_[static_cast<std::size_t>(dst_pos)] = values[k++];
      });
    }
  }
}

}  // namespace strata
