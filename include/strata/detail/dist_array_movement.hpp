// Out-of-class definitions of DistArray's data movement (routing, sorting, dense
// assembly, the travelling layout of 2-D loops) and checkpoints: thin typed steps
// that hand the storage to the byte-level engine in src/array and src/io. Included at the end of dist_array.hpp.
#pragma once

#include "strata/detail/free_now.hpp"

namespace strata {

template <class T, std::size_t N>
detail::CheckpointSnapshot DistArray<T, N>::checkpoint_snapshot(Bytes storage) const {
  return detail::snapshot_of_part(checkpoint_manifest(checkpoint_type_tag<T>(), detail::array_label(*this)),
                                  std::move(storage), keys_.column(), std::as_bytes(local_values()));
}

template <class T, std::size_t N>
std::uint64_t DistArray<T, N>::content_fingerprint() const {
  return detail::content_fingerprint_of(rt_->comm(), shape_vector(), sparse_, box_, keys_.column(),
                                        std::as_bytes(local_values()), sizeof(T));
}

template <class T, std::size_t N>
detail::AddValue DistArray<T, N>::add_value() {
  if constexpr (requires(T a, const T b) { a += b; }) {
    return [](std::byte* to, const std::byte* from) {
      T a, b;
      std::memcpy(&a, to, sizeof(T));
      std::memcpy(&b, from, sizeof(T));
      a += b;
      std::memcpy(to, &a, sizeof(T));
    };
  } else {
    return nullptr;
  }
}

template <class T, std::size_t N>
std::vector<Entry<T, N>> DistArray<T, N>::route_entries(std::vector<entry_type> entries) const {
  if (rt_->size() == 1) return entries;
  std::vector<entry_type> out;
  detail::route_records(
      rt_->comm(), dist_, record_layout(), std::as_bytes(std::span<const entry_type>(entries)),
      [&] { detail::free_now(entries); },
      // Grown piece by piece (not value-initialised whole while the pieces are held).
      [&](std::size_t n) { out.reserve(n); },
      [&](std::span<const std::byte> piece) {
        const auto* first = reinterpret_cast<const entry_type*>(piece.data());
        out.insert(out.end(), first, first + piece.size() / sizeof(entry_type));
      });
  return out;
}

template <class T, std::size_t N>
void DistArray<T, N>::absorb_entries(std::vector<entry_type> in, Duplicates dup) {
  keys_.release();  // the old elements are dead: not held while the new ones arrive
  detail::free_now(values_);
  global_nnz_ = detail::absorb_records(
      rt_->comm(), &rt_->pool(), shape_vector(), record_layout(), std::as_bytes(std::span<const entry_type>(in)),
      dup, add_value(),
      [&] { detail::free_now(in); },
      [&](std::size_t n) {
        // Small pages: a sparse array is read in key order (loops stream their own
        // packed copies), and a huge page's first touch costs more than it saves.
        std::byte* keys = keys_.allocate(n);  // key_width_for(shape) bytes a subscript, as absorb_records writes
        values_ = std::vector<T>(n);
        return std::pair(keys, reinterpret_cast<std::byte*>(values_.data()));
      });
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::assemble_dense(Runtime& rt, const Shape<N>& shape, const Partition& p,
                                                std::span<const detail::DensePiece> pieces,
                                                const detail::BoxOfPiece& box_of) {
  DistArray a(rt, shape, p, false);
  a.allocate_dense();
  detail::place_dense_pieces(rt.comm(), a.dist_, a.box_, pieces, box_of, sizeof(T),
                             std::as_writable_bytes(std::span<T>(a.dense_)));
  return a;
}

template <class T, std::size_t N>
void DistArray<T, N>::check_in_bounds(Runtime& rt, const Shape<N>& shape, const std::vector<entry_type>& entries,
                                      const char* what) {
  detail::check_records_in_bounds(rt.comm(), shape_vector_of(shape), record_layout(),
                                  std::as_bytes(std::span<const entry_type>(entries)), what);
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_begin() {
  if (sparse_)
    throw ShapeError(fmt::format("array {}: only dense arrays can travel between ranks", name()));
  travel_home_rows_.reset();  // the whole array: travel_drop copies the part out
  travel_partition_ = dist_.partition();
  travel_version_ = structure_version();
  detail::DenseStorage<T> full(static_cast<std::size_t>(volume(shape_)));
  detail::gather_dense(rt_->comm(), dist_, std::as_bytes(std::span<const T>(dense_)), sizeof(T),
                       std::as_writable_bytes(std::span<T>(full)));
  dense_ = std::move(full);
  for (std::size_t d = 0; d < N; ++d) box_[d] = IndexSet::range(0, shape_[d]);
  recompute_strides();
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_begin_units(std::span<const std::uint64_t> needed, std::size_t unit_elems,
                                         std::vector<detail::LentUnit>* lent) {
  if (sparse_)
    throw ShapeError(fmt::format("array {}: only dense arrays can travel between ranks", name()));
  travel_partition_ = dist_.partition();
  travel_version_ = structure_version();
  const auto whole_size = static_cast<std::size_t>(volume(shape_));
  bool rows_only = box_[0].contiguous();  // the part is a range of whole rows: it moves in place
  for (std::size_t d = 1; d < N; ++d) rows_only = rows_only && box_[d].size() == shape_[d];
  const auto at = static_cast<std::size_t>(box_[0].begin() * row_elements());
  if (rows_only && dense_.allocated() == whole_size && dense_.window_start() == at) {
    // Storage left by the last such call already addresses the whole array with the
    // part in place: nothing to copy, no page to fault in. (The rest reads as zeros,
    // except on pages it shares with the part, which keep what the last call left.)
    travel_home_rows_ = std::pair(box_[0].begin(), box_[0].end());
    dense_.widen();
  } else {
    // No huge pages: a page is resident only where the part or a unit lies on it.
    detail::DenseStorage<T> full(whole_size, /*huge_pages=*/false);
    if (rows_only) {
      travel_home_rows_ = std::pair(box_[0].begin(), box_[0].end());
      dense_.move_to(full.data() + at);
    } else {
      travel_home_rows_.reset();  // travel_drop copies the part out
      std::vector<IndexSet> whole;
      for (const auto e : shape_) whole.push_back(IndexSet::range(0, e));
      detail::copy_box_overlap(box_, std::as_bytes(std::span<const T>(dense_)), whole,
                               std::as_writable_bytes(std::span<T>(full)), sizeof(T));
    }
    dense_ = std::move(full);
  }
  for (std::size_t d = 0; d < N; ++d) box_[d] = IndexSet::range(0, shape_[d]);
  recompute_strides();
  try {
    detail::fetch_dense_units(rt_->comm(), dist_, sizeof(T), unit_elems, needed,
                              std::as_writable_bytes(std::span<T>(dense_)), lent);
  } catch (...) {
    travel_drop();  // back to the part, which is whole in the storage
    throw;
  }
}

template <class T, std::size_t N>
std::optional<std::pair<std::int64_t, std::int64_t>> DistArray<T, N>::part_is_home_blocks(
    const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) const {
  auto mine = detail::rows_of_blocks(rows, home_rank, rt_->rank());
  if (mine) {
    const auto [lo, hi] = *mine;
    const IndexSet& part = box_[0];
    if (part.size() != hi - lo || (hi > lo && (!part.contiguous() || part.begin() != lo))) mine.reset();
    for (std::size_t d = 1; d < N; ++d)
      if (box_[d].size() != shape_[d]) mine.reset();
  }
  // Every rank takes the same path (the other one is collective).
  if (rt_->comm().allreduce(std::int64_t{mine ? 1 : 0}, ReduceOp::min) == 0) return std::nullopt;
  return mine;
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_begin(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) {
  if (sparse_)
    throw ShapeError(fmt::format("array {}: only dense arrays can travel between ranks", name()));
  travel_partition_ = dist_.partition();
  travel_version_ = structure_version();
  const auto whole = static_cast<std::size_t>(volume(shape_));
  travel_home_rows_ = part_is_home_blocks(rows, home_rank);
  if (const auto& mine = travel_home_rows_) {
    // The rank's rows are where they start: no communication. Storage left by the last
    // journey already addresses the whole array with the rows in place.
    const auto at = static_cast<std::size_t>(mine->first * row_elements());
    if (dense_.allocated() == whole && dense_.window_start() == at) {
      dense_.widen();
    } else {
      // No huge pages: blocks are released page by page as they leave.
      detail::DenseStorage<T> full(whole, /*huge_pages=*/false);
      dense_.move_to(full.data() + at);
      dense_ = std::move(full);
    }
  } else {
    detail::DenseStorage<T> full(whole, /*huge_pages=*/false);
    detail::scatter_dense_blocks(rt_->comm(), dist_, std::as_bytes(std::span<const T>(dense_)), sizeof(T), rows,
                                 home_rank, std::as_writable_bytes(std::span<T>(full)));
    dense_ = std::move(full);
  }
  for (std::size_t d = 0; d < N; ++d) box_[d] = IndexSet::range(0, shape_[d]);
  recompute_strides();
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_end(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) {
  if (travel_home_rows_) {  // every rank started with its home blocks in place
    const auto [lo, hi] = *std::exchange(travel_home_rows_, std::nullopt);
    box_ = dist_.box(rt_->rank());  // the part held before the journey
    dense_.narrow(static_cast<std::size_t>(lo * row_elements()), static_cast<std::size_t>((hi - lo) * row_elements()));
    recompute_strides();
    restore_structure_version(travel_version_);
    return;
  }
  const Shape<N> shape = shape_;
  const std::int64_t row_elems = row_elements();
  const std::span<const std::byte> all = std::as_bytes(std::span<const T>(dense_));
  std::vector<detail::DensePiece> pieces;
  for (std::size_t b = 0; b < home_rank.size(); ++b) {
    if (home_rank[b] != rt_->rank()) continue;
    const auto begin = static_cast<std::size_t>(rows[b] * row_elems) * sizeof(T);
    const auto end = static_cast<std::size_t>(rows[b + 1] * row_elems) * sizeof(T);
    pieces.push_back({static_cast<std::int64_t>(b), all.subspan(begin, end - begin)});
  }
  const detail::AnonymousArrays temporary;
  DistArray home = assemble_dense(*rt_, shape, travel_partition_, pieces, [&](std::int64_t b) {
    std::vector<IndexSet> box;
    for (auto e : shape) box.push_back(IndexSet::range(0, e));
    box[0] = IndexSet::range(rows[static_cast<std::size_t>(b)], rows[static_cast<std::size_t>(b) + 1]);
    return box;
  });
  const std::uint64_t version = travel_version_;  // the assignment brings home's
  *this = std::move(home);
  // Back in the partition it had before travelling: the same structure, so plans
  // that use this array stay valid.
  restore_structure_version(version);
}

template <class T, std::size_t N>
void DistArray<T, N>::travel_drop() {
  if (travel_home_rows_) {  // the part's rows lie in place (travel_begin_units): keep them, give the rest back
    const auto [lo, hi] = *std::exchange(travel_home_rows_, std::nullopt);
    box_ = dist_.box(rt_->rank());
    dense_.narrow(static_cast<std::size_t>(lo * row_elements()), static_cast<std::size_t>((hi - lo) * row_elements()));
    recompute_strides();
    restore_structure_version(travel_version_);
    return;
  }
  const detail::DenseStorage<T> full = std::move(dense_);
  const detail::AnonymousArrays temporary;
  DistArray mine(*rt_, shape_, travel_partition_, false);
  mine.allocate_dense();
  std::vector<IndexSet> whole;
  for (const auto e : shape_) whole.push_back(IndexSet::range(0, e));
  detail::copy_box_overlap(whole, std::as_bytes(std::span<const T>(full)), mine.box_,
                           std::as_writable_bytes(std::span<T>(mine.dense_)), sizeof(T));
  const std::uint64_t version = travel_version_;  // the assignment brings mine's
  *this = std::move(mine);
  restore_structure_version(version);
}

template <class T, std::size_t N>
DistArray<T, N> DistArray<T, N>::from_checkpoint(Runtime& rt, detail::CheckpointRead&& read, const Partition& p) {
  const detail::CheckpointManifest& m = read.manifest;
  Shape<N> shape{};
  std::copy(m.shape.begin(), m.shape.end(), shape.begin());
  if (m.sparse) {
    std::vector<entry_type> entries(detail::sparse_entries_in(read));
    detail::unpack_sparse_parts(read, record_layout(), reinterpret_cast<std::byte*>(entries.data()));
    return sparse(rt, shape, std::move(entries), Duplicates::error, p);
  }
  DistArray a(rt, shape, p, false);
  a.allocate_dense();
  detail::place_dense_parts(rt.comm(), read, a.dist_, a.box_, sizeof(T),
                            std::as_writable_bytes(std::span<T>(a.dense_)));
  return a;
}

template <class T, std::size_t N>
std::function<void()> DistArray<T, N>::stage_load(const std::filesystem::path& dir) {
  std::shared_ptr<DistArray> loaded;
  {
    const detail::AnonymousArrays temporary;  // carries data only; keeps this array's id
    auto read = detail::read_checkpoint(rt_->comm(), dir, {sizeof(T), checkpoint_type_tag<T>(), N});
    const Partition p = read.manifest.partition_for(rt_->size());
    loaded = std::make_shared<DistArray>(from_checkpoint(*rt_, std::move(read), p));
  }
  if (loaded->shape() != shape_)
    throw CheckpointError(fmt::format("{}: holds an array of shape [{}], but {} has shape [{}]", dir.string(),
                                      fmt::join(loaded->shape(), ", "), detail::array_label(*this),
                                      fmt::join(shape_, ", ")));
  return [this, loaded] { *this = std::move(*loaded); };
}

namespace detail {

/// What the typed checkpoint API (strata/io/checkpoint.hpp) reaches inside DistArray.
struct ArrayAccess {
  template <class T, std::size_t N>
  static CheckpointManifest manifest_of(const DistArray<T, N>& a, const std::string& type_tag,
                                        const std::filesystem::path& dir) {
    return a.checkpoint_manifest(type_tag, dir.string());
  }
  template <class T, std::size_t N>
  static KeyColumn key_column(const DistArray<T, N>& a) {
    return a.keys_.column();
  }
  template <class T, std::size_t N>
  static DistArray<T, N> from_checkpoint(Runtime& rt, CheckpointRead&& read, const Partition& p) {
    return DistArray<T, N>::from_checkpoint(rt, std::move(read), p);
  }
};

}  // namespace detail

}  // namespace strata
