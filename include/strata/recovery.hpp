// What a program may ask of its run's loop calls: how many it made, how many a
// resumed run skipped, where the time of automatic checkpoints went, and which of its
// settings a checkpoint must match to be resumed.
//
// The loop calls themselves (the journal, automatic checkpoints, fast re-execution,
// record and replay) are the engine's, in src/recovery/; README.md, "Automatic
// checkpoints and resuming", says what they do. These free functions are their whole
// public face, so a program never depends on how the engine keeps them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace strata {
class Runtime;
}

namespace strata::recovery {

/// Where the time of automatic checkpoints went, on this rank.
struct CheckpointTimes {
  int written = 0;            ///< checkpoints committed
  double copy_seconds = 0;    ///< the driver: copying arrays and journal, starting the writer
  double commit_seconds = 0;  ///< the driver, during the run: polls, waits for writers, commits
  double final_seconds = 0;   ///< the driver: finish_checkpoints (the last checkpoint's wait)
  double write_seconds = 0;   ///< the writers of the committed checkpoints (in the background)
};

/// The loop calls (parallel_for, sync_for) the run has made so far, skipped ones
/// included. Every rank makes the same calls, so every rank sees the same count.
std::int64_t loop_calls_made(Runtime& rt);

/// The loop calls a resumed run skipped so far: the newest checkpoint covered them, so
/// what they left was restored instead of computed.
std::int64_t loop_calls_skipped(Runtime& rt);

/// Collective: waits for the automatic checkpoint being written, if any, and commits
/// it. The Runtime does this when it ends normally and logs a failure; call it first to
/// get the failure as an IoError instead.
void finish_checkpoints(Runtime& rt);

/// This rank's checkpoint times so far (call finish_checkpoints first to count the last).
CheckpointTimes checkpoint_times(Runtime& rt);

/// Binds the run's automatic checkpoints to a setting that changes its results: an
/// option ("--lr", "0.05"), a fingerprint of the training data, the model's size.
/// Every checkpoint the run writes records it; resuming refuses, with a
/// CheckpointError naming the setting and both values, a checkpoint written with
/// another value or without the setting, and one with a setting this run does not
/// bind. (The job's seed is always compared.) Call on every rank with the same values,
/// before the loop calls they affect. OptionError for a name that is empty or holds
/// spaces or control characters, a value with control characters, or a name bound
/// twice to different values.
void bind_checkpoints(Runtime& rt, const std::string& name, const std::string& value);

/// One DistArray of a run's automatic checkpoint.
struct CheckpointedArray {
  std::string name;           ///< the array's name (set_name), or "array-<id>" when it has none
  std::filesystem::path dir;  ///< its checkpoint, for load_checkpoint (strata/io/checkpoint.hpp)
  std::string type_tag;       ///< the element type as checkpoints name it ("f32", "i64")
  std::vector<std::int64_t> shape;
};

/// What the newest checkpoint of a run holds.
struct RunCheckpoint {
  std::filesystem::path dir;  ///< the checkpoint: DIR/call-NNNNNNNN
  std::string program;        ///< the executable that wrote it
  std::int64_t call = 0;      ///< the loop calls it covers
  std::vector<CheckpointedArray> arrays;
};

/// Collective: the newest complete checkpoint in `root` (a checkpoint directory, or
/// one call-NNNNNNNN in it), verified as resuming verifies it (the checksums of every
/// manifest and journal), written by any program with any seed: for reading its
/// arrays outside the run (the Python module's strata.load_checkpoint). Throws
/// CheckpointError on every rank, naming the file, when `root` is missing, holds no
/// checkpoint yet, or the checkpoint is damaged.
RunCheckpoint newest_checkpoint(Runtime& rt, const std::filesystem::path& root);

}  // namespace strata::recovery
