// Checkpoints of DistArrays: save on any number of ranks, load on any number.
//
//   strata::save_checkpoint(W, "ckpt/W");                 // collective
//   auto W2 = strata::load_checkpoint<float, 2>(rt, "ckpt/W");
//
// A checkpoint is a directory: manifest.txt (element size and type tag, shape,
// dense or sparse, partition, rank count, and per part file its size and XXH3-64
// checksum) and part-NNNNN.bin, one per writing rank. It is written into a temporary
// sibling directory, flushed to disk and renamed into place, so DIR always holds
// either the previous checkpoint or the new one, complete. Loading verifies every
// part before building the array: a missing, truncated or corrupted file, or a
// checkpoint of another element type or dimension count, raises the same
// CheckpointError on every rank, naming the file and what is wrong.
//
// Dense parts hold the rank's elements in box order; sparse parts hold the rank's
// indices (N x int64 each) followed by its values. Element bytes are stored as they
// are in memory (little-endian on every platform Strata builds for).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"

namespace strata {

namespace detail {
template <class T>
struct CheckpointTag {
  static std::string get() {
    if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_floating_point_v<T>)
      return fmt::format("f{}", 8 * sizeof(T));
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return fmt::format("i{}", 8 * sizeof(T));
    else if constexpr (std::is_integral_v<T>)
      return fmt::format("u{}", 8 * sizeof(T));
    else
      return typeid(T).name();
  }
};
template <class S, std::size_t K>
struct CheckpointTag<std::array<S, K>> {
  static std::string get() { return fmt::format("{}[{}]", CheckpointTag<S>::get(), K); }
};
}  // namespace detail

/// The type tag recorded for element type T unless the caller passes its own:
/// "f32", "i64", "u8", "f32[4]" for std::array<float, 4>, else typeid(T).name().
template <class T>
std::string checkpoint_type_tag() {
  return detail::CheckpointTag<T>::get();
}

namespace detail {
/// The manifest of a checkpoint of `a` (everything but the parts). Local.
template <class T, std::size_t N>
CheckpointManifest checkpoint_manifest_of(const DistArray<T, N>& a, const std::string& type_tag,
                                          const std::filesystem::path& dir) {
  if (!a.valid())
    throw ShapeError(fmt::format("checkpoint {}: the array was never created", dir.string()));
  CheckpointManifest m;
  m.element_size = sizeof(T);
  m.type_tag = type_tag;
  m.dims = N;
  m.shape.assign(a.shape().begin(), a.shape().end());
  m.sparse = a.is_sparse();
  const Partition& p = a.partition();
  if (p.kind() == Partition::Kind::range) {
    // Record the resolved bounds (balanced ones included) so the saved layout is exact.
    m.partition = Partition::range(p.dim(), a.distribution().bounds());
    m.explicit_bounds = !p.bounds().empty() || !p.weights().empty();
  } else {
    m.partition = p;
  }
  m.nnz = a.nnz();
  return m;
}

/// Empties `storage` and readies it for `bytes` more bytes after a pad that puts them
/// on a kDirectIoAlignment boundary, so that they can be written with O_DIRECT;
/// returns the pad. Storage too small is replaced by fresh storage on huge pages.
inline std::size_t prepare_direct_io_storage(Bytes& storage, std::size_t bytes) {
  storage.clear();
  if (storage.capacity() < bytes + kDirectIoAlignment) {
    Bytes().swap(storage);
    reserve_huge(storage, bytes + kDirectIoAlignment);
  }
  const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  const std::size_t pad = (kDirectIoAlignment - address % kDirectIoAlignment) % kDirectIoAlignment;
  storage.resize(pad);
  return pad;
}

/// Appends this rank's part of a sparse array to `mine`: its indices, then its values.
template <class T, std::size_t N>
void append_sparse_checkpoint_part(Bytes& mine, const DistArray<T, N>& a) {
  mine.reserve(mine.size() + static_cast<std::size_t>(a.local_nnz()) * (sizeof(Index<N>) + sizeof(T)));
  append_span<Index<N>>(mine, a.local_keys());
  append_span<T>(mine, a.local_values());
}
}  // namespace detail

/// Collective: writes `a` to directory `dir` (created with its parents if needed),
/// atomically replacing an earlier checkpoint there. `type_tag` names the element
/// type; load_checkpoint must be given the same. Throws IoError naming the path if
/// any rank cannot write; then `dir` is left as it was.
template <class T, std::size_t N>
void save_checkpoint(const DistArray<T, N>& a, const std::filesystem::path& dir,
                     const std::string& type_tag = checkpoint_type_tag<T>()) {
  const detail::CheckpointManifest m = detail::checkpoint_manifest_of(a, type_tag, dir);
  if (a.is_sparse()) {
    Bytes mine;
    detail::append_sparse_checkpoint_part(mine, a);
    detail::write_checkpoint(a.runtime().comm(), dir, m, mine);
  } else
    detail::write_checkpoint(a.runtime().comm(), dir, m, std::as_bytes(a.local_values()));
}

/// Collective: loads the checkpoint in `dir`, written with any number of ranks.
/// The array is dense or sparse as saved and follows `partition`, or by default the
/// saved partition resolved for this rank count (explicit range bounds that do not
/// fit the new count become even ranges on the same dimension). Throws
/// CheckpointError on every rank if the checkpoint is missing, damaged, or holds
/// another element type (size or tag) or dimension count; nothing is built then.
template <class T, std::size_t N>
DistArray<T, N> load_checkpoint(Runtime& rt, const std::filesystem::path& dir,
                                std::optional<Partition> partition = {},
                                const std::string& type_tag = checkpoint_type_tag<T>()) {
  auto read = detail::read_checkpoint(rt.comm(), dir, {sizeof(T), type_tag, N});
  const detail::CheckpointManifest& m = read.manifest;
  Shape<N> shape{};
  std::copy(m.shape.begin(), m.shape.end(), shape.begin());
  const Partition p = partition ? *partition : m.partition_for(rt.size());
  if (m.sparse) {
    std::vector<Entry<T, N>> entries;
    for (auto& [id, bytes] : read.parts) {
      const std::size_t n = bytes.size() / (sizeof(Index<N>) + sizeof(T));
      const auto* keys = bytes.data();
      const auto* values = keys + n * sizeof(Index<N>);
      for (std::size_t k = 0; k < n; ++k) {
        Entry<T, N> e;
        std::memcpy(&e.index, keys + k * sizeof(Index<N>), sizeof(Index<N>));
        std::memcpy(&e.value, values + k * sizeof(T), sizeof(T));
        entries.push_back(e);
      }
      Bytes().swap(bytes);
    }
    return DistArray<T, N>::sparse(rt, shape, std::move(entries), Duplicates::error, p);
  }
  const Distribution saved = m.saved_distribution();
  std::vector<std::pair<std::int64_t, std::vector<T>>> pieces;
  for (auto& [id, bytes] : read.parts) {
    pieces.emplace_back(id, detail::as_vector<T>(bytes));
    Bytes().swap(bytes);
  }
  return DistArray<T, N>::assemble_dense(
      rt, shape, p, pieces, [&](std::int64_t id) { return saved.box(static_cast<int>(id)); });
}

// DistArray's type-erased checkpoint hooks (ArrayBase::checkpoint_snapshot, stage_load): what lets
// automatic checkpoints (src/recovery/) save and restore arrays they know only by id.
// Defined here, not in dist_array.hpp, because they need the functions above; each
// header includes the other, so either order works.
template <class T, std::size_t N>
detail::CheckpointSnapshot DistArray<T, N>::checkpoint_snapshot(Bytes storage) const {
  detail::CheckpointSnapshot s{detail::checkpoint_manifest_of(*this, checkpoint_type_tag<T>(), detail::array_label(*this)),
                               std::move(storage)};
  const auto values = std::as_bytes(local_values());
  const std::size_t bytes = is_sparse() ? local_keys().size() * sizeof(Index<N>) + values.size() : values.size();
  s.offset = detail::prepare_direct_io_storage(s.part, bytes);
  // Copied into reserved storage in one pass, without zero-filling first.
  if (is_sparse()) detail::append_sparse_checkpoint_part(s.part, *this);
  else s.part.insert(s.part.end(), values.begin(), values.end());
  return s;
}

template <class T, std::size_t N>
std::string DistArray<T, N>::type_tag() const {
  return checkpoint_type_tag<T>();
}

template <class T, std::size_t N>
std::function<void()> DistArray<T, N>::stage_load(const std::filesystem::path& dir) {
  std::shared_ptr<DistArray> loaded;
  {
    const detail::AnonymousArrays temporary;  // carries data only; keeps this array's id
    loaded = std::make_shared<DistArray>(load_checkpoint<T, N>(*rt_, dir));
  }
  if (loaded->shape() != shape_)
    throw CheckpointError(fmt::format("{}: holds an array of shape [{}], but {} has shape [{}]", dir.string(),
                                      fmt::join(loaded->shape(), ", "), detail::array_label(*this),
                                      fmt::join(shape_, ", ")));
  return [this, loaded] { *this = std::move(*loaded); };
}

}  // namespace strata
