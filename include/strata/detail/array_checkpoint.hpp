// DistArray's checkpoints on bytes: the manifest of an array, its part as a snapshot,
// and turning the parts read back into an array's storage. Compiled once, in
// src/io/array_checkpoint.cpp; strata/io/checkpoint.hpp is the typed API over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "strata/detail/array_movement.hpp"
#include "strata/detail/key_column.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace strata::detail {

/// The manifest of a checkpoint of an array (everything but its parts). Local.
/// `label` names the array or directory in the error raised for an array never created.
CheckpointManifest array_manifest(bool created, std::size_t element_size, const std::string& type_tag,
                                  const std::vector<std::int64_t>& shape, bool sparse, const Distribution& dist,
                                  std::int64_t nnz, const std::string& label);

/// This rank's part, copied into `storage` after a pad that puts it on a 4 KiB
/// boundary (for O_DIRECT): the keys then the values (sparse) or the values (dense).
/// Checkpoints hold 8-byte subscripts whatever their width in memory.
CheckpointSnapshot snapshot_of_part(CheckpointManifest meta, Bytes storage, const KeyColumn& keys,
                                    std::span<const std::byte> values);

/// Collective: writes this rank's part (keys then values) of the array `meta`
/// describes into `dir` (write_checkpoint).
void write_array_checkpoint(Comm& comm, const std::filesystem::path& dir, const CheckpointManifest& meta,
                            const KeyColumn& keys, std::span<const std::byte> values);

/// The number of entries the sparse parts of `read` hold.
std::size_t sparse_entries_in(const CheckpointRead& read);

/// Writes the entries of the sparse parts of `read` as records of `layout` to `out`
/// (room for sparse_entries_in(read) records), freeing each part once copied.
void unpack_sparse_parts(CheckpointRead& read, const RecordLayout& layout, std::byte* out);

/// Collective: puts the dense parts of `read` (any rank count) where `dist` places
/// them; `mine` is this rank's storage, box `my_box`. Frees the parts.
void place_dense_parts(Comm& comm, CheckpointRead& read, const Distribution& dist,
                       const std::vector<IndexSet>& my_box, std::size_t element_size, std::span<std::byte> mine);

}  // namespace strata::detail
