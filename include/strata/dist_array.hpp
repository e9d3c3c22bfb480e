// DistArray<T, N>: an N-dimensional array (N = 1..4) spread over the ranks of a job.
//
// Dense arrays store every element of the rank's box (see partition.hpp) in row-major
// order. Sparse arrays store the rank's non-zeros as keys sorted lexicographically with
// a parallel array of values. Both are partitioned by a Partition (range over one
// dimension by default) and can be repartitioned collectively.
//
// Operations marked "collective" must be called by every rank in the same order.
// Local accessors (at, row, find, for_each_local) touch only this rank's elements.
//
// The data movement (routing, sorting, dense assembly, travel) and checkpoints work
// on bytes in src/array and src/io (detail/array_movement.hpp,
// detail/array_checkpoint.hpp); the typed members here hand them the storage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "strata/array_reader.hpp"
#include "strata/detail/array_checkpoint.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/detail/box.hpp"
#include "strata/detail/dense_storage.hpp"
#include "strata/detail/histogram.hpp"
#include "strata/detail/huge_pages.hpp"
#include "strata/detail/pack.hpp"
#include "strata/detail/sparse_keys.hpp"
#include "strata/detail/worker.hpp"
#include "strata/element.hpp"
#include "strata/error.hpp"
#include "strata/index.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/partition.hpp"
#include "strata/random.hpp"
#include "strata/runtime.hpp"

namespace strata {

namespace detail {
struct ArrayAccess;
}  // namespace detail

template <class T, std::size_t N>
class DistArray : public detail::ArrayBase {
  static_assert(N >= 1 && N <= 4, "DistArray supports 1 to 4 dimensions");
  static_assert(std::is_trivially_copyable_v<T>, "DistArray elements must be trivially copyable");

 public:
  using value_type = T;
  using entry_type = Entry<T, N>;
  static constexpr std::size_t dims = N;

  DistArray() = default;

  // ---- creation (collective) ------------------------------------------------

  static DistArray zeros(Runtime& rt, const Shape<N>& shape, const Partition& p = Partition::range(0)) {
    return fill(rt, shape, T{}, p);
  }

  static DistArray fill(Runtime& rt, const Shape<N>& shape, const T& value,
                        const Partition& p = Partition::range(0));

  /// Element i = f(i). f runs on this rank's threads for its own elements.
  template <class F>
  static DistArray generate(Runtime& rt, const Shape<N>& shape, F&& f, const Partition& p = Partition::range(0));

  /// Uniform values in [lo, hi). The value of every element depends only on the seed
  /// and its index, never on the number of ranks or threads. No seed: the runtime's
  /// next seed (the same on every rank).
  static DistArray rand(Runtime& rt, const Shape<N>& shape, double lo = 0.0, double hi = 1.0,
                        const Partition& p = Partition::range(0), std::optional<std::uint64_t> seed = {});

  /// Normal values with the given mean and standard deviation; reproducible as rand.
  static DistArray randn(Runtime& rt, const Shape<N>& shape, double stddev = 1.0, double mean = 0.0,
                         const Partition& p = Partition::range(0), std::optional<std::uint64_t> seed = {});

  /// A sparse array from entries any rank may hold; they are routed to their owners.
  /// Entries arriving from lower ranks count as earlier (for Duplicates::first/last).
  static DistArray sparse(Runtime& rt, const Shape<N>& shape, std::vector<entry_type> entries,
                          Duplicates dup = Duplicates::error, const Partition& p = Partition::range(0));

  /// A dense array whose listed elements come from entries any rank may hold (routed
  /// to their owners); unlisted elements are T{}. A later entry overwrites an earlier one.
  static DistArray dense_from_entries(Runtime& rt, const Shape<N>& shape, const std::vector<entry_type>& entries,
                                      const Partition& p = Partition::range(0));

  // ---- shape and placement --------------------------------------------------

  bool is_sparse() const { return sparse_; }
  bool valid() const { return rt_ != nullptr; }
  const Shape<N>& shape() const { return shape_; }
  std::int64_t extent(int d) const { return shape_.at(static_cast<std::size_t>(d)); }
  /// Elements stored across all ranks: non-zeros of a sparse array, the volume of a dense one.
  std::int64_t nnz() const { return sparse_ ? global_nnz_ : volume(shape_); }
  /// Elements stored on this rank.
  std::int64_t local_nnz() const {
    return sparse_ ? static_cast<std::int64_t>(keys_.size()) : static_cast<std::int64_t>(dense_.size());
  }
  const Partition& partition() const { return dist_.partition(); }
  const Distribution& distribution() const { return dist_; }
  /// The indices this rank holds, per dimension.
  const std::vector<IndexSet>& local_box() const { return box_; }
  Runtime& runtime() const { return *rt_; }

  /// The type-erased form of distribution() (detail::ArrayBase).
  const Distribution& distribution_of() const override { return dist_; }

  // ---- local access ---------------------------------------------------------

  /// Whether this rank holds `i` (for sparse arrays: whether it would own it).
  bool is_local(const Index<N>& i) const { return in_bounds(i, shape_) && dist_.owner(i.data()) == rt_->rank(); }

  /// Position of `i` in local dense storage, or -1. O(1) for range partitions.
  std::int64_t local_offset(const Index<N>& i) const {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < N; ++d) {
      const std::int64_t p = box_[d].local(i[d]);
      if (p < 0) return -1;
      off += p * strides_[d];
    }
    return off;
  }

  /// Names the array in messages and `explain` output.
  DistArray& set_name(std::string name) {
    rename(std::move(name));
    return *this;
  }

  /// This rank's element at `i` (read and possibly written). Throws ShapeError when
  /// `i` is out of bounds, held by another rank, or (sparse) not stored.
  T& at(const Index<N>& i, std::source_location where = std::source_location::current()) {
    return *element(i, where, detail::AccessMode::read_write);
  }
  /// Read-only access: loop analysis records a read, never a write.
  const T& read(const Index<N>& i, std::source_location where = std::source_location::current()) const {
    return *const_cast<DistArray*>(this)->read_element(i, where);
  }
  const T& at(const Index<N>& i, std::source_location where = std::source_location::current()) const {
    return read(i, where);
  }
  /// Reads for one call of a loop body, with the cache lookup hoisted out of the
  /// body's inner loops (strata/array_reader.hpp): take it inside the body.
  ArrayReader<T, N> reader() const { return ArrayReader<T, N>(*this); }
  /// Write-only access (the old value is not read).
  void write(const Index<N>& i, const T& v, std::source_location where = std::source_location::current()) {
    *element(i, where, detail::AccessMode::write) = v;
  }

  template <class... I>
    requires(sizeof...(I) == N - 1 && (std::is_integral_v<I> && ...))
  T& operator()(At first, I... rest) {
    return *element(Index<N>{first.value, static_cast<std::int64_t>(rest)...}, first.where,
                    detail::AccessMode::read_write);
  }
  T& operator[](At i)
    requires(N == 1)
  {
    return *element(Index<1>{i.value}, i.where, detail::AccessMode::read_write);
  }
  const T& operator[](At i) const
    requires(N == 1)
  {
    return *const_cast<DistArray*>(this)->read_element(Index<1>{i.value}, i.where);
  }

  /// Pointer to this rank's element at `i`, or nullptr. Not observed by loop analysis.
  T* find(const Index<N>& i) {
    if (!in_bounds(i, shape_)) return nullptr;
    if (!sparse_) {
      const std::int64_t off = local_offset(i);
      return off < 0 ? nullptr : &dense_[static_cast<std::size_t>(off)];
    }
    const std::int64_t at = keys_.find(i);
    return at >= 0 ? &values_[static_cast<std::size_t>(at)] : nullptr;
  }
  const T* find(const Index<N>& i) const { return const_cast<DistArray*>(this)->find(i); }

  /// The elements along the last dimension at leading indices (dense arrays whose
  /// last dimension is not partitioned): W.row(u) of a users x K matrix.
  template <class... I>
    requires(sizeof...(I) == N - 2 && (std::is_integral_v<I> && ...))
  std::span<T> row(At first, I... rest) {
    return row_span(Index<N>{first.value, static_cast<std::int64_t>(rest)..., 0}, first.where,
                    detail::AccessMode::read_write);
  }
  /// Read-only row access.
  template <class... I>
    requires(sizeof...(I) == N - 2 && (std::is_integral_v<I> && ...))
  std::span<const T> read_row(At first, I... rest) const {
    return const_cast<DistArray*>(this)->row_span(Index<N>{first.value, static_cast<std::int64_t>(rest)..., 0},
                                                  first.where, detail::AccessMode::read);
  }
  template <class... I>
    requires(sizeof...(I) == N - 2 && (std::is_integral_v<I> && ...))
  std::span<const T> row(At first, I... rest) const {
    return read_row(first, rest...);
  }
  /// read_row at index `i` (its last subscript ignored): for ArrayReader's misses.
  std::span<const T> read_row_at(Index<N> i, std::source_location where) const {
    i[N - 1] = 0;
    return const_cast<DistArray*>(this)->row_span(i, where, detail::AccessMode::read);
  }

  /// Calls f(index, value&) for every local element: row-major (dense) or key order (sparse).
  template <class F>
  void for_each_local(F&& f) {
    if (sparse_) {
      for (std::size_t k = 0; k < keys_.size(); ++k) {
        const Index<N> i = keys_[k];
        f(i, values_[k]);
      }
      return;
    }
    std::int64_t k = 0;
    detail::for_each_in_box<N>(box_, [&](const Index<N>& i) { f(i, dense_[static_cast<std::size_t>(k++)]); });
  }
  template <class F>
  void for_each_local(F&& f) const {
    const_cast<DistArray*>(this)->for_each_local([&](const Index<N>& i, T& v) { f(i, static_cast<const T&>(v)); });
  }

  /// Local storage: dense elements in box order, or sparse values in key order.
  std::span<T> local_values() { return sparse_ ? std::span<T>(values_) : std::span<T>(dense_); }
  std::span<const T> local_values() const {
    return sparse_ ? std::span<const T>(values_) : std::span<const T>(dense_);
  }
  /// Sorted keys of a sparse array's local non-zeros: a random-access range of
  /// Index<N> values (stored with 32-bit subscripts where every extent allows).
  const detail::SparseKeys<N>& local_keys() const { return keys_; }
  /// Every local element with its index.
  std::vector<entry_type> local_entries() const;

  // ---- collective operations ------------------------------------------------

  /// A new array, same shape and partition, with element f(value) or f(index, value).
  template <class F>
  auto map(F&& f) const;

  /// Moves elements so the array follows partition `p` (all-to-all).
  void repartition(const Partition& p);

  /// Relabels indices along each dimension in `dimensions` by a random permutation
  /// (the same on every rank), moving elements accordingly. Spreads skewed data (a
  /// few very popular items) evenly over partitions. Returns one permutation per
  /// listed dimension: perm[old] = new.
  std::vector<std::vector<std::int64_t>> randomize(const std::vector<int>& dimensions,
                                                   std::optional<std::uint64_t> seed = {});

  /// Number of stored elements at each index along `dim`, summed over ranks; with
  /// `bins` > 0, counts are grouped into that many equal-width bins.
  std::vector<std::int64_t> histogram(int dim, std::int64_t bins = 0) const;

  /// The whole dense array, row-major, on every rank. Meant for small arrays.
  std::vector<T> gather() const;

  /// Every stored element with its index, sorted by index, on every rank.
  std::vector<entry_type> gather_entries() const;

 private:
  template <class, std::size_t>
  friend class DistArray;
  friend struct detail::ArrayAccess;

  DistArray(Runtime& rt, const Shape<N>& shape, const Partition& p, bool sparse)
      : rt_(&rt), shape_(shape), dist_(p, shape_vector_of(shape), rt.size()), sparse_(sparse), keys_(shape) {
    box_ = dist_.box(rt.rank());
    recompute_strides();
  }

  // detail::ArrayBase: the engine's type-erased face of the array (loop execution,
  // checkpoints, replay). Private: the engine calls them through ArrayBase, and user
  // code has the typed members above.
  int dimension_count() const override { return static_cast<int>(N); }
  std::vector<std::int64_t> shape_vector() const override { return shape_vector_of(shape_); }
  bool is_sparse_array() const override { return sparse_; }
  void repartition_to(const Partition& p) override { repartition(p); }
  std::size_t element_size() const override { return sizeof(T); }
  std::span<std::byte> local_bytes() override { return std::as_writable_bytes(local_values()); }
  void travel_begin() override;
  void travel_begin_units(std::span<const std::uint64_t> needed, std::size_t unit_elems,
                          std::vector<detail::LentUnit>* lent) override;
  void travel_begin(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) override;
  void travel_end(const std::vector<std::int64_t>& rows, const std::vector<int>& home_rank) override;
  void travel_drop() override;
  detail::CheckpointSnapshot checkpoint_snapshot(Bytes storage) const override;
  std::function<void()> stage_load(const std::filesystem::path& dir) override;
  std::string type_tag() const override { return checkpoint_type_tag<T>(); }
  std::uint64_t content_fingerprint() const override;

  // ---- the storage as the byte-level engine sees it (detail/array_movement.hpp) ----

  // Where an entry's value lies: after its N subscripts, at T's alignment.
  static constexpr detail::RecordLayout record_layout() {
    constexpr std::size_t index_bytes = sizeof(Index<N>);
    constexpr std::size_t value_offset = (index_bytes + alignof(T) - 1) / alignof(T) * alignof(T);
    static_assert(value_offset + sizeof(T) <= sizeof(entry_type));
    return {static_cast<int>(N), sizeof(entry_type), value_offset, sizeof(T)};
  }

  // Duplicates::sum's addition, for element types that have +=; nullptr otherwise.
  static detail::AddValue add_value();

  detail::CheckpointManifest checkpoint_manifest(const std::string& type_tag, const std::string& label) const {
    return detail::array_manifest(valid(), sizeof(T), type_tag, shape_vector(), sparse_, dist_, nnz(), label);
  }

  // A dense array assembled from pieces whose boxes every rank can compute: piece id
  // -> box. Used by repartitioning and by travelling rows going home.
  static DistArray assemble_dense(Runtime& rt, const Shape<N>& shape, const Partition& p,
                                  std::span<const detail::DensePiece> pieces, const detail::BoxOfPiece& box_of);

  // The array a checkpoint holds (read and verified), following `p`.
  static DistArray from_checkpoint(Runtime& rt, detail::CheckpointRead&& read, const Partition& p);

  void recompute_strides() {
    // Strides address dense storage; a sparse array's box may hold more indices than
    // an int64 counts (shape 2^40 x 2^40), and it has no strides.
    std::int64_t stride = 1;
    for (std::size_t d = N; d-- > 0;) {
      strides_[d] = sparse_ ? 0 : stride;
      if (!sparse_) stride *= box_[d].size();
    }
    rows_fast_ = !sparse_ && box_[N - 1].contiguous() && box_[N - 1].size() == shape_[N - 1];
    for (std::size_t d = 0; d < N; ++d) {
      rows_fast_ = rows_fast_ && box_[d].contiguous();
      box_begin_[d] = box_[d].begin();
      box_size_[d] = box_[d].size();
    }
  }

  static std::vector<std::int64_t> shape_vector_of(const Shape<N>& s) { return {s.begin(), s.end()}; }

  // Collective: raises one ShapeError on every rank if any rank's entry lies outside `shape`.
  static void check_in_bounds(Runtime& rt, const Shape<N>& shape, const std::vector<entry_type>& entries,
                              const char* what);

  // Zeroed storage for the local box, on huge pages where the system allows: loop bodies reach
  // rows of large arrays (factors) at random, and with 4 KiB pages almost every access missed the TLB.
  void allocate_dense() { dense_ = detail::DenseStorage<T>(static_cast<std::size_t>(local_box_volume())); }

  // Collective, travelling with time blocks: the rows of this rank's home blocks, where
  // every rank's part is exactly those rows (2-D plans lay travelling arrays out so).
  std::optional<std::pair<std::int64_t, std::int64_t>> part_is_home_blocks(const std::vector<std::int64_t>& rows,
                                                                           const std::vector<int>& home_rank) const;
  std::int64_t row_elements() const { return shape_[0] > 0 ? volume(shape_) / shape_[0] : 0; }

  std::int64_t local_box_volume() const {
    std::int64_t v = 1;
    for (const auto& s : box_) v *= s.size();
    return v;
  }

  // A claim of a re-validating run (detail::t_claims): taken in place where the run
  // lets the accessors (detail::ClaimView; the storage then holds the whole array),
  // else made through the claims.
  [[gnu::always_inline]] void claim_access(const Index<N>& i, bool whole_last, detail::AccessMode mode) {
    using View = detail::ClaimView;
    const View* v = claim_view();
    if (v && (v->by_row || !whole_last) && mode != detail::AccessMode::buffered) {
      std::size_t unit = 0;
      const std::size_t dims = v->by_row ? N - 1 : N;
      for (std::size_t d = 0; d < dims; ++d)
        unit = unit * static_cast<std::size_t>(shape_[d]) + static_cast<std::size_t>(i[d]);
      const bool write = mode != detail::AccessMode::read;
      if (v->marks) {
        std::uint8_t& m = v->marks[unit * v->stride];
        const bool held = write ? (m & (View::absent | View::written)) == View::written : !(m & View::absent);
        if (held) [[likely]] {
          m |= View::mark_of(write);
          return;
        }
      } else if (v->states) {
        const std::uint64_t word = v->states[unit * v->stride].load(std::memory_order_relaxed);
        if (View::holds(word, detail::t_claim_tag, write)) [[likely]]
          return;
      } else if (!write || unit < v->claims_from) [[likely]] {
        return;
      }
    }
    detail::t_claims->claim(*this, i, whole_last, mode);
  }

  // During a verifying run: whether the access lies where only this thread can be
  // (detail::WindowView), so the observer need not see it.
  bool in_window(const Index<N>& i, detail::AccessMode mode) const {
    const detail::WindowView* w = window_view();
    if (!w || mode == detail::AccessMode::buffered || (mode != detail::AccessMode::read && !w->writes)) return false;
    if (w->dim < 0) return true;
    const std::int64_t x = i[static_cast<std::size_t>(w->dim)], *b = w->bounds + 2 * detail::t_worker;
    return x >= b[0] && x < b[1];
  }

  // Every observed element access goes through here.
  T* element(const Index<N>& i, const std::source_location& where, detail::AccessMode mode) {
    if (detail::t_observer) [[unlikely]] {
      if (T* c = cached(i, mode, false)) return c;
      T* p = find(i);
      if (p && in_window(i, mode)) return p;
      void* alt = detail::t_observer->on_access(*this, where, mode, i, false, p, sizeof(T));
      if (!alt && !p) throw_not_local(i, where);
      return alt ? static_cast<T*>(alt) : p;
    }
    T* p = find(i);
    if (!p) throw_not_local(i, where);
    if (detail::t_claims) [[unlikely]] claim_access(i, false, mode);
    return p;
  }

  // A read: during a relaxed run the rank's cache comes first. It is the hot path of
  // sparse models (every non-zero reads the model), so it is tried before the
  // observer: a view is published only while no checker watches the run.
  T* read_element(const Index<N>& i, const std::source_location& where) {
    if (cache_view())
      if (T* c = cached(i, detail::AccessMode::read, false)) return c;
    return element(i, where, detail::AccessMode::read);
  }

  // A read of a relaxed array during a run whose cache holds the unit: the cached
  // element (or row), counted as a cache read; nullptr for everything else, which
  // takes the observer's path (detail/cache_view.hpp).
  T* cached(const Index<N>& i, detail::AccessMode mode, bool whole_last) {
    const detail::CacheView* view = cache_view();
    if (!view || mode != detail::AccessMode::read) [[likely]]
      return nullptr;
    std::int64_t u = i[0];
    for (std::size_t d = 1; d + 1 < N; ++d) {
      if (static_cast<std::uint64_t>(i[d]) >= static_cast<std::uint64_t>(shape_[d])) return nullptr;
      u = u * shape_[d] + i[d];
    }
    std::int64_t within = 0;
    if constexpr (N > 1) {
      if (!whole_last) {
        within = i[N - 1];
        if (static_cast<std::uint64_t>(within) >= static_cast<std::uint64_t>(shape_[N - 1])) return nullptr;
      }
    }
    T* unit = view->unit<T>(u);
    if (!unit) return nullptr;
    ++detail::t_cache_reads[view->counter];
    return unit + within;
  }

  // The hot path of loop bodies, kept small so it inlines: a dense array whose box is
  // contiguous in every dimension. Observed accesses (reconnaissance, checked runs)
  // and everything else go to row_slow.
  [[gnu::always_inline]] std::span<T> row_span(const Index<N>& i, const std::source_location& where,
                                               detail::AccessMode mode) {
    if (rows_fast_) [[likely]] {
      std::int64_t off = 0;
      bool inside = true;
      for (std::size_t d = 0; d + 1 < N; ++d) {
        const auto rel = static_cast<std::uint64_t>(i[d] - box_begin_[d]);
        inside &= rel < static_cast<std::uint64_t>(box_size_[d]);
        off += static_cast<std::int64_t>(rel) * strides_[d];
      }
      if (inside && !detail::t_observer) [[likely]] {
        if (detail::t_claims) [[unlikely]] claim_access(i, true, mode);
        return {dense_.data() + off, static_cast<std::size_t>(shape_[N - 1])};
      }
      // A verifying run's rows inside the running worker's window pass here too, not
      // through a call out of line (most of a speculative first run's checks).
      if (inside && in_window(i, mode)) return {dense_.data() + off, static_cast<std::size_t>(shape_[N - 1])};
      if (inside) return observed_row(i, where, mode, dense_.data() + off);
    }
    return row_slow(i, where, mode);
  }

  [[gnu::noinline]] std::span<T> row_slow(const Index<N>& i, const std::source_location& where,
                                          detail::AccessMode mode) {
    if (sparse_) throw ShapeError("row() needs a dense array");
    if (box_[N - 1].size() != shape_[N - 1])
      throw ShapeError(fmt::format("row(): the last dimension is partitioned ({})", dist_.describe()));
    const std::int64_t off = in_bounds(i, shape_) ? local_offset(i) : -1;
    return observed_row(i, where, mode, off < 0 ? nullptr : dense_.data() + off);
  }

  // A row at `p` (nullptr: not held here), shown to the thread's observer if any.
  [[gnu::noinline]] std::span<T> observed_row(const Index<N>& i, const std::source_location& where,
                                              detail::AccessMode mode, T* p) {
    const auto len = static_cast<std::size_t>(shape_[N - 1]);
    if (detail::t_observer) {
      if (T* c = cached(i, mode, true)) return {c, len};
      if (p && in_window(i, mode)) return {p, len};
      void* alt = detail::t_observer->on_access(*this, where, mode, i, true, p, len * sizeof(T));
      if (alt) return {static_cast<T*>(alt), len};
    }
    if (!p) throw_not_local(i, where);
    if (detail::t_claims) detail::t_claims->claim(*this, i, true, mode);
    return {p, len};
  }

  // Names the access site and the array: "model.cpp:40:12: W: index (9, 0) is outside ...".
  [[noreturn]] void throw_not_local(const Index<N>& i, const std::source_location& where) const {
    const std::string at = detail::site_label(where) + ": " + detail::array_label(*this) + ": index " + to_string(i);
    if (!in_bounds(i, shape_)) throw ShapeError(fmt::format("{} is outside shape {}", at, to_string(shape_)));
    if (sparse_ && dist_.owner(i.data()) == rt_->rank())
      throw ShapeError(fmt::format("{} holds no element of this sparse array", at));
    throw ShapeError(fmt::format("{} belongs to rank {}, not to rank {} ({})", at, dist_.owner(i.data()), rt_->rank(),
                                 dist_.describe()));
  }

  template <class F>
  static auto call_map(F& f, const Index<N>& i, const T& v) {
    if constexpr (std::is_invocable_v<F&, const Index<N>&, const T&>)
      return f(i, v);
    else
      return f(v);
  }

  // Runs f(position, index) over the local dense box on the thread pool.
  template <class F>
  void parallel_local(F&& f);

  template <class Draw>
  static DistArray random_fill(Runtime& rt, const Shape<N>& shape, const Partition& p, Draw&& draw);

  static std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed, std::uint64_t stream);

  // Sends every entry to the rank that owns its index; returns what this rank
  // received, grouped by source rank in rank order.
  std::vector<entry_type> route_entries(std::vector<entry_type> entries) const;

  // Sorts received sparse entries by index (stable: arrival order breaks ties),
  // resolves duplicates and stores them.
  void absorb_entries(std::vector<entry_type> in, Duplicates dup);

  Runtime* rt_ = nullptr;
  Shape<N> shape_{};
  Distribution dist_;
  std::vector<IndexSet> box_;
  std::array<std::int64_t, N> strides_{};
  std::array<std::int64_t, N> box_begin_{}, box_size_{};  // of box_, for the row() fast path
  bool rows_fast_ = false;
  bool sparse_ = false;
  std::int64_t global_nnz_ = 0;
  detail::DenseStorage<T> dense_;  // dense: local box, row-major
  detail::SparseKeys<N> keys_;    // sparse: sorted local keys
  std::vector<T> values_;         // sparse: values parallel to keys_
  Partition travel_partition_;       // the partition to return to after travel_end
  std::uint64_t travel_version_ = 0;  // the structure version to return to after travel
  // Of a journey with time blocks: this rank's home rows, where every rank's part was
  // its home blocks (travel_begin's collective decision, which travel_end follows); of
  // travel_begin_units: the part's rows, where it is a range of rows (travel_drop).
  std::optional<std::pair<std::int64_t, std::int64_t>> travel_home_rows_;
};

}  // namespace strata

#include "strata/detail/dist_array_collectives.hpp"
#include "strata/detail/dist_array_movement.hpp"
#include "strata/detail/dist_array_instances.hpp"
