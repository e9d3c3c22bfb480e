// A run checkpoint on its way to disk (the layout is in run_checkpoint.hpp).
//
// Writing a checkpoint of a large model takes longer than the driver should wait:
// most of it is the kernel copying the bytes and the disk making them durable
// (fsync). So the driver only copies, and background threads do the rest, while the
// next loop calls go on changing the arrays:
//
//  1. copy (constructor, collective): every rank copies its share of what the
//     checkpoint holds (its part of every changed array, its Buffers' owner state,
//     its journal); rank 0 makes DIR/call-N.tmp/;
//  2. write (background, every rank): the copies go into call-N.tmp/, fsynced; their
//     bulk straight from memory to the disk (O_DIRECT, io/files.hpp), so writing
//     takes neither page-cache memory nor the CPU time of copying into it;
//  3. publish (background, rank 0, once every rank has written): each array's
//     manifest and the run manifest, the rename of call-N.tmp to call-N, DIR/latest,
//     and removing all but the two newest checkpoints;
//  4. done.
//
// The driver moves the checkpoint from one step to the next with advance(), a
// collective it makes once every rank's background work for the step is over (the
// ranks agree on when with a one-integer allreduce at each loop call's end). A crash
// at any point before step 4 leaves the previous checkpoint the newest complete one,
// as a crash in the middle of a synchronous write would.
//
// With `background = false` every step runs on the calling thread instead, and the
// copies are freed as soon as they are written. In the background, the copies cost as
// much memory as the rank's share of the changed arrays; take_storage() hands them
// to the next checkpoint, which copies into them instead of allocating afresh.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "recovery/run_checkpoint.hpp"

namespace strata {
class Runtime;
}

namespace strata::recovery {

class PendingCheckpoint {
 public:
  /// Collective: step 1, then starts step 2. N is `m.call`; the arrays are those with
  /// these ids that still exist, with their Buffers' owner state, saved under their id
  /// less `id_base` (the ids issued before the run began: LoopCalls). `storage` is an
  /// earlier checkpoint's take_storage(), or empty. Throws IoError on every rank when
  /// a copy or the directory cannot be made.
  PendingCheckpoint(Runtime& rt, std::filesystem::path root, RunManifest m, const std::vector<std::uint64_t>& array_ids,
                    std::uint64_t id_base, const std::vector<CallRecord>& journal, bool background,
                    std::vector<Bytes> storage = {});
  /// Waits for the background work. A checkpoint not done is removed (rank 0): no
  /// resume reads call-N.tmp/ anyway.
  ~PendingCheckpoint();
  PendingCheckpoint(const PendingCheckpoint&) = delete;
  PendingCheckpoint& operator=(const PendingCheckpoint&) = delete;

  /// The loop call the checkpoint follows.
  std::int64_t call() const { return manifest_.call; }
  /// Local: this rank's work for the current step is over (it may have failed).
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  /// Local: until ready().
  void wait();
  /// Collective, once every rank is ready(): checks that the step succeeded
  /// everywhere and starts the next. Throws IoError on every rank if any rank's write
  /// or rank 0's publishing failed; `latest` then still names the previous checkpoint.
  void advance();
  /// The checkpoint is complete and DIR/latest names it.
  bool done() const { return step_ == Step::done; }
  /// Seconds the writer took on this rank (valid once done()).
  double write_seconds() const { return write_seconds_; }
  /// Once done(): the copies' storage, for the next checkpoint to reuse (empty unless
  /// written in the background).
  std::vector<Bytes> take_storage();

 private:
  enum class Step { write, publish, done };
  struct File {
    std::filesystem::path path;
    Bytes bytes;             ///< the copy, from `offset` on (a pad before aligns it for O_DIRECT)
    std::size_t offset = 0;
    std::uint64_t size = 0, checksum = 0;
    std::span<const std::byte> content() const { return std::span<const std::byte>(bytes).subspan(offset); }
  };

  void copy_share(const std::vector<std::uint64_t>& array_ids, std::uint64_t id_base,
                  const std::vector<CallRecord>& journal, std::vector<Bytes> storage);
  void start(std::function<void()> work);  // runs `work` for the current step
  void write_files();
  void publish(const std::vector<Bytes>& sums);  // rank 0

  Runtime& rt_;
  bool background_;
  std::filesystem::path root_, dir_, tmp_;
  RunManifest manifest_;
  /// Per array directory (array-<id>, state-<id>), in the order of files_: its name
  /// and its manifest without parts. This rank's part of directory k is files_[k].
  std::vector<std::pair<std::string, detail::CheckpointManifest>> array_dirs_;
  std::vector<File> files_;  ///< one part per array directory, then the journal
  Step step_ = Step::write;
  std::string error_;  ///< what the current step could not do; empty when it succeeded
  double write_seconds_ = 0;
  std::atomic<bool> ready_{false};
  std::thread worker_;
};

}  // namespace strata::recovery
