// A run checkpoint: what automatic checkpoints write after a loop call and what
// `--resume` reads back. A checkpoint directory (--checkpoint-dir DIR) holds:
//
//   DIR/latest               the name of the newest complete checkpoint
//   DIR/call-00000012/       the checkpoint taken after loop call 12, complete: it is
//                            written as call-00000012.tmp/ and renamed when done
//                            (pending_checkpoint.hpp writes it)
//     manifest.txt           the run (program, ranks, threads, seed, the settings bound
//                            to it), the loop call and its site, the arrays with the
//                            checksums of their manifests, the journals; ends with its
//                            own checksum
//     array-<id>/            each array, in the format of strata/io/checkpoint.hpp
//     state-<id>/            the owner state of the Buffer over array <id>, if it has
//                            one (AdaGrad and AdaRevision sums)
//     journal-<rank>.bin     that rank's journal: per loop call so far, its site and the
//                            accumulators' bytes after it
//
// The two newest checkpoints are kept; older ones are removed once a newer one is
// complete.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/comm.hpp"

namespace strata {
class Runtime;
}

namespace strata::recovery {

/// The file in a checkpoint directory that names its newest complete checkpoint.
inline constexpr const char* kLatestName = "latest";

/// An array as the manifest lists it. Arrays are named by id, counted from the run's
/// start (ArrayBase::ids_before_live): the program creates them in the same order
/// every run (ids of library temporaries do not count).
struct SavedArray {
  std::uint64_t id = 0;
  std::string tag;  ///< element type, as checkpoints name it
  std::vector<std::int64_t> shape;
  bool owner_state = false;  ///< state-<id>/ holds its Buffer's owner state
  std::int64_t rounds = 0;   ///< that Buffer's apply rounds so far
  std::string name;          ///< the array's name, if it has one
};

struct JournalPart {
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
};

/// A manifest inside the checkpoint (array-<id>/manifest.txt, state-<id>/manifest.txt)
/// and the checksum of its text: the run manifest binds them, and through their part
/// checksums every byte of the checkpoint, so parts cannot be swapped between runs.
struct NestedManifest {
  std::string dir;  ///< "array-12"
  std::uint64_t checksum = 0;
};

/// A setting that changes the run's results (recovery::bind_checkpoints): a resume
/// with another value is refused, naming it.
struct BoundSetting {
  std::string name, value;
};

inline constexpr int kRunManifestVersion = 2;

struct RunManifest {
  int version = kRunManifestVersion;
  std::string program;  ///< the executable's file name
  int ranks = 0, threads = 0;
  std::uint64_t seed = 0;
  std::int64_t call = 0;            ///< loop calls the checkpoint covers
  std::int64_t changing_calls = 0;  ///< of those, the ones that changed arrays
  std::string site;                 ///< where loop call `call` is in the program
  std::vector<SavedArray> arrays;
  std::vector<NestedManifest> nested;  ///< one per array-<id> and state-<id> directory
  std::vector<BoundSetting> settings;
  std::vector<JournalPart> journals;  ///< one per rank
};

std::string format_run_manifest(const RunManifest& m);
/// Throws CheckpointError naming `file` and the line for anything malformed, and
/// when the checksum line does not match the text (a damaged manifest).
RunManifest parse_run_manifest(std::string_view text, const std::string& file);

/// What the journal keeps of one loop call.
struct CallRecord {
  std::string site;
  std::vector<Bytes> states;  ///< journal_bytes() of every live JournaledState, oldest first
};
Bytes encode_journal(const std::vector<CallRecord>& records);
/// Throws CheckpointError naming `file` when the bytes do not parse.
std::vector<CallRecord> decode_journal(std::span<const std::byte> bytes, const std::string& file);

/// "call-00000012"
std::string checkpoint_name(std::int64_t call);
/// Inside a checkpoint: "array-3", an array's directory, and "state-3", the owner
/// state of its relaxed table, by the array's id in its run.
std::string saved_array_dir(std::uint64_t id);
std::string saved_state_dir(std::uint64_t id);

/// A checkpoint read back for resuming, verified: the manifest and every rank's
/// journal (all of them, so a run with another rank count can combine them).
struct ResumePoint {
  std::filesystem::path dir;
  RunManifest manifest;
  std::vector<std::vector<CallRecord>> journals;  ///< [writer rank][call - 1]
};

/// Whose checkpoints a reader takes: resuming, only this program's with this run's
/// seed; a reader of the arrays (recovery::newest_checkpoint), any program's.
enum class Origin { this_run, any };

/// Collective. `root` is a checkpoint directory (the newest complete checkpoint in it
/// is used) or one checkpoint (a call-NNNNNNNN directory). Returns nothing when
/// `root` exists but holds no checkpoint yet. Throws CheckpointError on every rank,
/// naming the file, when `root` does not exist or the checkpoint is damaged
/// (truncated, corrupted, files missing) or, for Origin::this_run, was written by
/// another program or with another seed.
std::optional<ResumePoint> read_resume_point(Runtime& rt, const std::filesystem::path& root,
                                             Origin origin = Origin::this_run);

/// The executable's file name ("strata"), as manifests record it.
std::string program_name();

}  // namespace strata::recovery
