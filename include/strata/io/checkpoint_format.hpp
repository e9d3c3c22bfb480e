// The type-independent half of checkpoints: what a checkpoint directory holds and the
// collective steps that write and verify it, on plain byte buffers. The templates in
// checkpoint.hpp turn a DistArray into one byte buffer per rank and back.
//
// A checkpoint is a directory with `manifest.txt` (key=value lines, see
// format_manifest) and one `part-NNNNN.bin` per rank that wrote it. Each part's size
// and xxHash XXH3-64 checksum are in the manifest; the manifest ends with a checksum
// of its own text. Writers fill `DIR.tmp-<nonce>/` and rename it to DIR at the end,
// so a reader never sees a half-written checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/partition.hpp"

namespace strata::detail {

inline constexpr int kCheckpointVersion = 1;
inline constexpr const char* kManifestName = "manifest.txt";

/// One part file as listed in the manifest.
struct CheckpointPart {
  std::string file;  ///< "part-00003.bin"
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;  ///< XXH3_64bits of the file's content
};

/// Everything a manifest says.
struct CheckpointManifest {
  int version = kCheckpointVersion;
  std::uint64_t element_size = 0;  ///< sizeof(T)
  std::string type_tag;            ///< names T ("f32", "f32[4]", or the caller's tag)
  std::uint64_t dims = 0;          ///< N
  std::vector<std::int64_t> shape;
  bool sparse = false;
  /// The partition as saved: range bounds are the resolved ones (so the saved layout
  /// can be rebuilt exactly); `explicit_bounds` says whether the user chose them.
  Partition partition;
  bool explicit_bounds = false;
  int ranks = 0;  ///< rank count that wrote the checkpoint (= number of parts)
  std::int64_t nnz = 0;
  std::vector<CheckpointPart> parts;

  /// Bytes one stored element takes in a part: the value (dense) or the index
  /// followed by the value (sparse).
  std::uint64_t record_size() const {
    return sparse ? dims * sizeof(std::int64_t) + element_size : element_size;
  }
  /// The layout the checkpoint was written with.
  Distribution saved_distribution() const;
  /// The partition a loader with `ranks` ranks uses by default: the saved kind,
  /// resolved for the new count (explicit range bounds that no longer fit fall back
  /// to even ranges; a fixed block2d grid that does not divide falls back to auto).
  Partition partition_for(int ranks) const;
};

/// One rank's share of a checkpoint, copied out of the array: what automatic
/// checkpoints hand to their background writer while the loop goes on changing the
/// array (the engine's src/recovery/pending_checkpoint.hpp). `meta` has no parts yet.
struct CheckpointSnapshot {
  CheckpointManifest meta;
  Bytes part;              ///< the part's bytes start at `offset`
  std::size_t offset = 0;  ///< a pad that puts them on a 4 KiB boundary, for O_DIRECT
};

/// What the loading caller expects; load rejects a checkpoint that differs. (Dense
/// or sparse is not part of it: a DistArray can be either; the loader rebuilds
/// whichever was saved.)
struct CheckpointExpect {
  std::uint64_t element_size = 0;
  std::string type_tag;
  std::uint64_t dims = 0;
};

/// XXH3-64 of `data`.
std::uint64_t checkpoint_checksum(std::span<const std::byte> data);
/// The same checksum of text (manifests, which checksum their own text).
inline std::uint64_t checkpoint_checksum(std::string_view text) {
  return checkpoint_checksum(std::as_bytes(std::span(text.data(), text.size())));
}

/// The largest manifest a reader accepts: one line per part or array keeps even a
/// 100,000-rank run far below it, and a crafted size allocates no more.
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{64} << 20;

/// "part-00003.bin"
std::string checkpoint_part_name(int part);

/// The manifest's text, ending with its own checksum line.
std::string format_manifest(const CheckpointManifest& m);

/// Parses manifest text; throws CheckpointError naming `file` and the line that is
/// malformed, or what is missing or inconsistent.
CheckpointManifest parse_manifest(std::string_view text, const std::string& file);

/// The manifest text of the checkpoint in `dir` (not a symlink, at most
/// kMaxManifestBytes); CheckpointError naming the directory or file otherwise.
std::string read_manifest_text(const std::filesystem::path& dir);

/// Collective: writes one part per rank (`mine` is this rank's) and the manifest
/// (`meta` without parts; rank 0's copy is used) into `dir`, atomically replacing an
/// earlier checkpoint there. Throws IoError naming the path on every rank if any
/// rank fails; nothing is left behind then.
void write_checkpoint(Comm& comm, const std::filesystem::path& dir, const CheckpointManifest& meta,
                      std::span<const std::byte> mine);

/// What read_checkpoint hands back: the manifest, and the parts this rank read
/// (part p is read by rank p % size), verified.
struct CheckpointRead {
  CheckpointManifest manifest;
  std::vector<std::pair<std::int64_t, Bytes>> parts;
};

/// Collective: reads the manifest, checks it against `expect`, reads and verifies
/// this rank's parts. If anything is missing, truncated, corrupted or mismatched on
/// any rank, every rank throws the same CheckpointError naming the file.
CheckpointRead read_checkpoint(Comm& comm, const std::filesystem::path& dir,
                               const CheckpointExpect& expect);

}  // namespace strata::detail
