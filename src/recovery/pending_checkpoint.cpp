// Staging a run checkpoint, writing it on a background thread, and committing it
// (see pending_checkpoint.hpp).
#include "recovery/pending_checkpoint.hpp"
#include "recovery/run_checkpoint.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/io/files.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/buffer_base.hpp"
#include "strata/runtime.hpp"

namespace strata::recovery {
namespace fs = std::filesystem;

namespace {

struct FileSum {
  std::uint64_t bytes;
  std::uint64_t checksum;
};

void write_text(const fs::path& p, const std::string& text) {
  detail::write_file_synced(p, std::as_bytes(std::span(text.data(), text.size())));
}

// Complete checkpoints in `root` (oldest first), and directories left by checkpoints
// that were never committed (a crash, or a failed write).
struct RootListing {
  std::vector<std::string> complete, abandoned;
};

RootListing list_root(const fs::path& root) {
  RootListing out;
  auto is_call = [](const std::string& n) {
    return n.size() == 13 && n.starts_with("call-") &&
           std::all_of(n.begin() + 5, n.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    const std::string n = e.path().filename().string();
    if (is_call(n)) out.complete.push_back(n);
    else if (n.ends_with(".tmp") && is_call(n.substr(0, n.size() - 4))) out.abandoned.push_back(n);
  }
  std::sort(out.complete.begin(), out.complete.end());
  return out;
}

}  // namespace

PendingCheckpoint::PendingCheckpoint(Runtime& rt, fs::path root, RunManifest m,
                                     const std::vector<std::uint64_t>& array_ids, std::uint64_t id_base,
                                     const std::vector<CallRecord>& journal, bool background,
                                     std::vector<Bytes> storage)
    : rt_(rt),
      background_(background),
      root_(std::move(root)),
      dir_(root_ / checkpoint_name(m.call)),
      tmp_(root_ / (checkpoint_name(m.call) + ".tmp")),
      manifest_(std::move(m)) {
  Comm& comm = rt_.comm();
  detail::all_or_none(comm, [&] {
    detail::typed<IoError>([&] {
      copy_share(array_ids, id_base, journal, std::move(storage));
      if (comm.rank() != 0) return;
      fs::create_directories(root_);
      fs::remove_all(tmp_);  // an earlier run's unfinished checkpoint of the same call
      fs::create_directories(tmp_);
      for (const auto& [name, meta] : array_dirs_) fs::create_directory(tmp_ / name);
    });
  });
  start([this] { write_files(); });
}

void PendingCheckpoint::copy_share(const std::vector<std::uint64_t>& array_ids, std::uint64_t id_base,
                                   const std::vector<CallRecord>& journal, std::vector<Bytes> storage) {
  const int rank = rt_.rank();
  auto reuse = [&] {
    const std::size_t k = files_.size();
    return k < storage.size() ? std::move(storage[k]) : Bytes();
  };
  manifest_.arrays.clear();
  for (const auto id : array_ids) {
    auto* a = detail::ArrayBase::find_array(id);
    if (!a) continue;  // gone since the call that changed it (on every rank alike)
    const std::uint64_t run_id = id - id_base;  // as the run counts its arrays
    SavedArray saved{run_id, a->type_tag(), a->shape_vector(), false, 0, a->name()};
    auto add = [&](const std::string& name, detail::CheckpointSnapshot s) {
      files_.push_back({tmp_ / name / detail::checkpoint_part_name(rank), std::move(s.part), s.offset});
      array_dirs_.emplace_back(name, std::move(s.meta));
    };
    add(saved_array_dir(run_id), a->checkpoint_snapshot(reuse()));
    if (auto* b = detail::BufferBase::find_buffer(id); b && b->has_owner_state()) {
      add(saved_state_dir(run_id), b->owner_state_snapshot(reuse()));
      saved.owner_state = true;
      saved.rounds = b->rounds();
    }
    manifest_.arrays.push_back(std::move(saved));
  }
  files_.push_back({tmp_ / fmt::format("journal-{}.bin", rank), encode_journal(journal)});
  for (auto& f : files_) f.size = f.content().size();
}

PendingCheckpoint::~PendingCheckpoint() {
  wait();
  if (!done() && rt_.rank() == 0) {
    std::error_code ignored;
    fs::remove_all(tmp_, ignored);
  }
}

void PendingCheckpoint::start(std::function<void()> work) {
  ready_.store(false, std::memory_order_relaxed);
  error_.clear();
  auto run = [this, work = std::move(work)] {
    try {
      work();
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    ready_.store(true, std::memory_order_release);
  };
  if (background_) worker_ = std::thread(std::move(run));
  else run();
}

void PendingCheckpoint::wait() {
  if (worker_.joinable()) worker_.join();
}

void PendingCheckpoint::advance() {
  Comm& comm = rt_.comm();
  wait();
  detail::all_or_none(comm, [&] {
    if (!error_.empty()) throw IoError(fmt::format("checkpoint {}: {}", dir_.string(), error_));
  });
  if (step_ == Step::write) {
    Bytes mine;
    for (const auto& f : files_) detail::append(mine, FileSum{f.size, f.checksum});
    auto sums = comm.allgatherv(mine);
    step_ = Step::publish;
    // Rank 0 publishes; the others stay ready, with nothing to do.
    if (comm.rank() == 0) start([this, sums = std::move(sums)] { publish(sums); });
  } else if (step_ == Step::publish) {
    step_ = Step::done;
  }
}

std::vector<Bytes> PendingCheckpoint::take_storage() {
  std::vector<Bytes> out;
  if (background_)
    for (auto& f : files_) out.push_back(std::move(f.bytes));
  return out;
}

void PendingCheckpoint::write_files() {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<fs::path> dirs;
  for (auto& f : files_) {
    f.checksum = detail::checkpoint_checksum(f.content());
    detail::write_file_synced_direct(f.path, f.content());
    if (!background_) Bytes().swap(f.bytes);  // inline: nothing keeps the copy
    if (std::find(dirs.begin(), dirs.end(), f.path.parent_path()) == dirs.end()) dirs.push_back(f.path.parent_path());
  }
  for (const auto& d : dirs) detail::sync_dir(d);  // the new names are durable too
  write_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rank 0, once every rank's files are durable: each array directory's manifest, the
// run manifest, the switch from call-N.tmp to call-N, `latest`; then the clean-up.
void PendingCheckpoint::publish(const std::vector<Bytes>& sums) {
  const int ranks = rt_.size();
  std::vector<std::vector<FileSum>> of_rank;  // [rank][file], in the order of files_
  for (const auto& b : sums) of_rank.push_back(detail::as_vector<FileSum>(b));
  auto sum_of = [&](int rank, std::size_t file) { return of_rank.at(static_cast<std::size_t>(rank)).at(file); };
  manifest_.nested.clear();
  for (std::size_t k = 0; k < array_dirs_.size(); ++k) {
    detail::CheckpointManifest m = array_dirs_[k].second;
    m.ranks = ranks;
    m.parts.clear();
    for (int r = 0; r < ranks; ++r) {
      const FileSum s = sum_of(r, k);
      m.parts.push_back({detail::checkpoint_part_name(r), s.bytes, s.checksum});
    }
    const std::string text = detail::format_manifest(m);
    write_text(tmp_ / array_dirs_[k].first / detail::kManifestName, text);
    detail::sync_dir(tmp_ / array_dirs_[k].first);
    manifest_.nested.push_back(
        {array_dirs_[k].first, detail::checkpoint_checksum(text)});
  }
  manifest_.journals.clear();
  for (int r = 0; r < ranks; ++r) {
    const FileSum s = sum_of(r, files_.size() - 1);
    manifest_.journals.push_back({s.bytes, s.checksum});
  }
  write_text(tmp_ / detail::kManifestName, format_run_manifest(manifest_));
  detail::sync_dir(tmp_);
  if (fs::exists(dir_)) fs::remove_all(dir_);  // an earlier run's checkpoint of the same call
  fs::rename(tmp_, dir_);
  // Through latest.tmp, created afresh: a symlink planted there is replaced, not written through.
  detail::write_file_replacing(root_ / kLatestName, dir_.filename().string() + "\n");
  const RootListing listing = list_root(root_);
  for (std::size_t k = 0; k + 2 < listing.complete.size(); ++k) fs::remove_all(root_ / listing.complete[k]);
  for (const auto& n : listing.abandoned) fs::remove_all(root_ / n);
}

}  // namespace strata::recovery
