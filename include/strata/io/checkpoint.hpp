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

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "strata/dist_array.hpp"
#include "strata/element.hpp"

namespace strata {

/// Collective: writes `a` to directory `dir` (created with its parents if needed),
/// atomically replacing an earlier checkpoint there. `type_tag` names the element
/// type (checkpoint_type_tag<T>() in strata/element.hpp by default); load_checkpoint
/// must be given the same. Throws IoError naming the path if any rank cannot write;
/// then `dir` is left as it was.
template <class T, std::size_t N>
void save_checkpoint(const DistArray<T, N>& a, const std::filesystem::path& dir,
                     const std::string& type_tag = checkpoint_type_tag<T>()) {
  const detail::CheckpointManifest m = detail::ArrayAccess::manifest_of(a, type_tag, dir);
  detail::write_array_checkpoint(a.runtime().comm(), dir, m, detail::ArrayAccess::key_column(a),
                                 std::as_bytes(a.local_values()));
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
  const Partition p = partition ? *partition : read.manifest.partition_for(rt.size());
  return detail::ArrayAccess::from_checkpoint<T, N>(rt, std::move(read), p);
}

}  // namespace strata
