// DistArray's checkpoints on bytes (strata/detail/array_checkpoint.hpp).
#include "strata/detail/array_checkpoint.hpp"

#include <cstring>

#include <fmt/format.h>

#include "strata/detail/huge_pages.hpp"
#include "strata/error.hpp"
#include "strata/io/files.hpp"

namespace strata::detail {

namespace {

// Empties `storage` and readies it for `bytes` more bytes after a pad that puts them
// on a kDirectIoAlignment boundary; returns the pad. Storage too small is replaced
// by fresh storage on huge pages.
std::size_t prepare_direct_io_storage(Bytes& storage, std::size_t bytes) {
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

// Keys as a checkpoint holds them: 8 bytes a subscript.
std::size_t wide_key_bytes(const KeyColumn& keys) {
  return static_cast<std::size_t>(keys.size) * static_cast<std::size_t>(keys.dims) * sizeof(std::int64_t);
}
void append_wide_keys(Bytes& out, const KeyColumn& keys) {
  if (keys.width == 8) {
    out.insert(out.end(), keys.data, keys.data + wide_key_bytes(keys));
    return;
  }
  std::int64_t index[4];
  const std::size_t row = static_cast<std::size_t>(keys.dims) * sizeof(std::int64_t);
  for (std::int64_t k = 0; k < keys.size; ++k) {
    keys.get(k, index);
    const auto* bytes = reinterpret_cast<const std::byte*>(index);
    out.insert(out.end(), bytes, bytes + row);
  }
}

}  // namespace

CheckpointManifest array_manifest(bool created, std::size_t element_size, const std::string& type_tag,
                                  const std::vector<std::int64_t>& shape, bool sparse, const Distribution& dist,
                                  std::int64_t nnz, const std::string& label) {
  if (!created) throw ShapeError(fmt::format("checkpoint {}: the array was never created", label));
  CheckpointManifest m;
  m.element_size = element_size;
  m.type_tag = type_tag;
  m.dims = shape.size();
  m.shape = shape;
  m.sparse = sparse;
  const Partition& p = dist.partition();
  if (p.kind() == Partition::Kind::range) {
    // The resolved bounds (balanced ones included), so the saved layout is exact.
    m.partition = Partition::range(p.dim(), dist.bounds());
    m.explicit_bounds = !p.bounds().empty() || !p.weights().empty();
  } else {
    m.partition = p;
  }
  m.nnz = nnz;
  return m;
}

CheckpointSnapshot snapshot_of_part(CheckpointManifest meta, Bytes storage, const KeyColumn& keys,
                                    std::span<const std::byte> values) {
  CheckpointSnapshot s{std::move(meta), std::move(storage)};
  s.offset = prepare_direct_io_storage(s.part, wide_key_bytes(keys) + values.size());
  // Copied into reserved storage in one pass, without zero-filling first.
  append_wide_keys(s.part, keys);
  s.part.insert(s.part.end(), values.begin(), values.end());
  return s;
}

void write_array_checkpoint(Comm& comm, const std::filesystem::path& dir, const CheckpointManifest& meta,
                            const KeyColumn& keys, std::span<const std::byte> values) {
  if (keys.size == 0) return write_checkpoint(comm, dir, meta, values);
  Bytes part;
  part.reserve(wide_key_bytes(keys) + values.size());
  append_wide_keys(part, keys);
  part.insert(part.end(), values.begin(), values.end());
  write_checkpoint(comm, dir, meta, part);
}

std::size_t sparse_entries_in(const CheckpointRead& read) {
  const std::uint64_t record = read.manifest.record_size();
  std::size_t n = 0;
  for (const auto& [id, bytes] : read.parts) n += bytes.size() / record;
  return n;
}

void unpack_sparse_parts(CheckpointRead& read, const RecordLayout& layout, std::byte* out) {
  const std::size_t key_bytes = static_cast<std::size_t>(layout.dims) * sizeof(std::int64_t);
  const std::size_t value_bytes = layout.value_size;
  for (auto& [id, bytes] : read.parts) {
    const std::size_t n = bytes.size() / (key_bytes + value_bytes);
    const std::byte* keys = bytes.data();
    const std::byte* values = keys + n * key_bytes;
    for (std::size_t k = 0; k < n; ++k) {
      std::memcpy(out, keys + k * key_bytes, key_bytes);
      std::memcpy(out + layout.value_offset, values + k * value_bytes, value_bytes);
      out += layout.record_size;
    }
    Bytes().swap(bytes);
  }
}

void place_dense_parts(Comm& comm, CheckpointRead& read, const Distribution& dist,
                       const std::vector<IndexSet>& my_box, std::size_t element_size, std::span<std::byte> mine) {
  const Distribution saved = read.manifest.saved_distribution();
  std::vector<DensePiece> pieces;
  pieces.reserve(read.parts.size());
  for (const auto& [id, bytes] : read.parts) pieces.push_back({id, bytes});
  place_dense_pieces(comm, dist, my_box, pieces, [&](std::int64_t id) { return saved.box(static_cast<int>(id)); },
                     element_size, mine);
  read.parts.clear();
}

}  // namespace strata::detail
