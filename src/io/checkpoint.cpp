// Writing and verifying checkpoint directories collectively: part files with fsync,
// the manifest, the atomic switch from the temporary directory to the final name,
// and per-part verification on load.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <system_error>

#include <fmt/format.h>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"

namespace strata::detail {
namespace fs = std::filesystem;

namespace {

// An absolute path without a trailing separator, so that DIR.tmp-X is a sibling of DIR.
fs::path normalized(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

fs::path sibling(const fs::path& dir, const std::string& suffix) {
  return dir.parent_path() / (dir.filename().string() + suffix);
}

std::uint64_t make_nonce() {
  std::random_device rd;
  const auto t =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return ((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ t ^
          (static_cast<std::uint64_t>(::getpid()) << 16));
}

// Rank 0, before any part is written: the parent exists, DIR is free or an earlier
// checkpoint, and the temporary directory is created.
void prepare(const fs::path& dir, const fs::path& tmp) {
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec)
    throw IoError(fmt::format("cannot create directory {} for checkpoint {}: {}",
                              dir.parent_path().string(), dir.string(), ec.message()));
  if (fs::exists(dir)) {
    if (!fs::is_directory(dir))
      throw IoError(fmt::format("cannot write checkpoint {}: it exists and is not a directory",
                                dir.string()));
    if (!fs::is_empty(dir) && !fs::exists(dir / kManifestName))
      throw IoError(fmt::format("refusing to replace {}: it exists and is not a checkpoint (no {})",
                                dir.string(), kManifestName));
  }
  if (!fs::create_directory(tmp, ec) || ec)
    throw IoError(fmt::format("cannot create checkpoint directory {}: {}", tmp.string(),
                              ec ? ec.message() : "it already exists"));
}

// Rank 0, once every part and the manifest are durable in `tmp`: makes `tmp` appear
// as `dir` in one step, replacing an earlier checkpoint there.
void commit(const fs::path& dir, const fs::path& tmp, const std::string& nonce) {
  std::error_code ec;
  if (fs::exists(dir)) {
    // Linux swaps the two names atomically; elsewhere fall back to two renames.
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
      sync_dir(dir.parent_path());
      fs::remove_all(tmp, ec);  // now the old checkpoint
      return;
    }
    const fs::path old = sibling(dir, ".old-" + nonce);
    fs::rename(dir, old, ec);
    if (ec)
      throw IoError(
          fmt::format("cannot move old checkpoint {} aside: {}", dir.string(), ec.message()));
    fs::rename(tmp, dir, ec);
    if (ec) {
      std::error_code ignored;
      fs::rename(old, dir, ignored);
      throw IoError(
          fmt::format("cannot rename {} to {}: {}", tmp.string(), dir.string(), ec.message()));
    }
    sync_dir(dir.parent_path());
    fs::remove_all(old, ec);
    return;
  }
  fs::rename(tmp, dir, ec);
  if (ec)
    throw IoError(
        fmt::format("cannot rename {} to {}: {}", tmp.string(), dir.string(), ec.message()));
  sync_dir(dir.parent_path());
}

struct PartSum {
  std::uint64_t bytes;
  std::uint64_t checksum;
};

// Rank 0, once every part is durable: the manifest, then the switch to the final name.
void finish(const Comm& comm, const CheckpointManifest& meta, const std::vector<Bytes>& sums,
            const fs::path& dir, const fs::path& tmp, const std::string& nonce) {
  CheckpointManifest m = meta;
  m.ranks = comm.size();
  m.parts.clear();
  for (int r = 0; r < comm.size(); ++r) {
    Reader in(sums[static_cast<std::size_t>(r)]);
    const auto s = in.get<PartSum>();
    m.parts.push_back({checkpoint_part_name(r), s.bytes, s.checksum});
  }
  const std::string text = format_manifest(m);
  write_file_synced(tmp / kManifestName, std::as_bytes(std::span(text.data(), text.size())));
  sync_dir(tmp);
  commit(dir, tmp, nonce);
}

void check_expected(const CheckpointManifest& m, const CheckpointExpect& want,
                    const fs::path& file) {
  const std::string f = file.string();
  if (m.element_size != want.element_size)
    throw CheckpointError(fmt::format(
        "checkpoint {} holds elements of {} bytes (type '{}'), but elements of {} bytes "
        "(type '{}') were asked for",
        f, m.element_size, m.type_tag, want.element_size, want.type_tag));
  if (m.dims != want.dims)
    throw CheckpointError(fmt::format(
        "checkpoint {} holds a {}-D array, but a {}-D array was asked for", f, m.dims, want.dims));
  if (m.type_tag != want.type_tag)
    throw CheckpointError(
        fmt::format("checkpoint {} holds elements of type '{}', but type '{}' was asked for", f,
                    m.type_tag, want.type_tag));
}

Bytes read_part(const fs::path& dir, const CheckpointPart& part) {
  const fs::path p = dir / part.file;
  const std::string f = p.string();
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) throw CheckpointError(fmt::format("checkpoint part {} is missing: {}", f, ec.message()));
  if (size < part.bytes)
    throw CheckpointError(fmt::format("checkpoint part {} is truncated: expected {} bytes, got {}",
                                      f, part.bytes, size));
  if (size > part.bytes)
    throw CheckpointError(fmt::format(
        "checkpoint part {} has the wrong size: expected {} bytes, got {}", f, part.bytes, size));
  Bytes data;
  try {
    data = read_file(p, part.bytes, Links::refuse);
  } catch (const IoError& e) {
    throw CheckpointError(fmt::format("checkpoint part {} cannot be read: {}", f, e.what()));
  }
  if (data.size() != part.bytes)
    throw CheckpointError(fmt::format("checkpoint part {} is truncated: expected {} bytes, got {}",
                                      f, part.bytes, data.size()));
  const auto sum = checkpoint_checksum(data);
  if (sum != part.checksum)
    throw CheckpointError(
        fmt::format("checkpoint part {} is corrupted: checksum mismatch (manifest {:016x}, file "
                    "{:016x})",
                    f, part.checksum, sum));
  return data;
}

}  // namespace

std::string read_manifest_text(const fs::path& dir) {
  if (!fs::exists(dir))
    throw CheckpointError(fmt::format("checkpoint directory {} does not exist", dir.string()));
  if (!fs::is_directory(dir))
    throw CheckpointError(fmt::format("checkpoint {} is not a directory", dir.string()));
  const fs::path m = dir / kManifestName;
  if (!fs::exists(m))
    throw CheckpointError(
        fmt::format("checkpoint manifest {} is missing (not a checkpoint?)", m.string()));
  try {
    const Bytes b = read_file(m, kMaxManifestBytes + 1, Links::refuse);
    if (b.size() > kMaxManifestBytes) throw IoError(fmt::format("larger than {} bytes", kMaxManifestBytes));
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  } catch (const std::exception& e) {
    throw CheckpointError(
        fmt::format("checkpoint manifest {} cannot be read: {}", m.string(), e.what()));
  }
}

void write_checkpoint(Comm& comm, const fs::path& dir_in, const CheckpointManifest& meta,
                      std::span<const std::byte> mine) {
  const fs::path dir = normalized(dir_in);
  std::uint64_t nonce = 0;
  all_or_none(comm, [&] {
    if (comm.rank() != 0) return;
    nonce = make_nonce();
    typed<IoError>([&] { prepare(dir, sibling(dir, fmt::format(".tmp-{:016x}", nonce))); });
  });
  comm.broadcast(std::as_writable_bytes(std::span(&nonce, 1)), 0);
  const std::string tag = fmt::format("{:016x}", nonce);
  const fs::path tmp = sibling(dir, ".tmp-" + tag);
  try {
    all_or_none(comm, [&] {
      typed<IoError>([&] { write_file_synced(tmp / checkpoint_part_name(comm.rank()), mine); });
    });
    Bytes sum;
    append(sum, PartSum{mine.size(), checkpoint_checksum(mine)});
    const auto sums = comm.allgatherv(sum);
    all_or_none(comm, [&] {
      if (comm.rank() != 0) return;
      typed<IoError>([&] { finish(comm, meta, sums, dir, tmp, tag); });
    });
  } catch (...) {
    if (comm.rank() == 0) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
    }
    throw;
  }
}

CheckpointRead read_checkpoint(Comm& comm, const fs::path& dir_in, const CheckpointExpect& expect) {
  const fs::path dir = normalized(dir_in);
  const fs::path manifest = dir / kManifestName;
  std::vector<char> text;
  all_or_none(comm, [&] {
    if (comm.rank() != 0) return;
    typed<CheckpointError>([&] {
      const std::string s = read_manifest_text(dir);
      text.assign(s.begin(), s.end());
    });
  });
  comm.broadcast_vector(text, 0);
  CheckpointRead out;
  all_or_none(comm, [&] {
    out.manifest = parse_manifest(std::string_view(text.data(), text.size()), manifest.string());
    check_expected(out.manifest, expect, manifest);
  });
  all_or_none(comm, [&] {
    typed<CheckpointError>([&] {
      for (int p = comm.rank(); p < out.manifest.ranks; p += comm.size())
        out.parts.emplace_back(p, read_part(dir, out.manifest.parts[static_cast<std::size_t>(p)]));
    });
  });
  return out;
}

}  // namespace strata::detail
