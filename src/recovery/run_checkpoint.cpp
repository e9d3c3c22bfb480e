// The run manifest and the journals of a run checkpoint, and reading a checkpoint back
// for resuming (see run_checkpoint.hpp; pending_checkpoint.cpp writes
// them).
#include "recovery/run_checkpoint.hpp"

#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"
#include "strata/runtime.hpp"

namespace strata::recovery {
namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "strata-run-checkpoint";
std::string shape_text(const std::vector<std::int64_t>& shape) { return fmt::format("{}", fmt::join(shape, "x")); }

std::vector<std::int64_t> parse_shape(const std::string& s) {
  std::vector<std::int64_t> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, 'x')) out.push_back(std::stoll(part));
  return out;
}

// The rest of a line after one space: a value that may hold spaces of its own (a
// program's file name, a source path, an array's name), as format_run_manifest writes
// it. Fails the stream when there is no space or nothing after it.
std::string rest_of_line(std::istringstream& in) {
  std::string value;
  if (in.get() != ' ') in.setstate(std::ios::failbit);
  else std::getline(in, value);
  return value;
}

std::string read_text(const fs::path& p, std::uint64_t limit) {
  const Bytes b = detail::read_file(p, limit);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

std::string checkpoint_name(std::int64_t call) { return fmt::format("call-{:08}", call); }

std::string program_name() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("unknown") : exe.filename().string();
}

std::string format_run_manifest(const RunManifest& m) {
  std::string t = fmt::format("{} {}\nprogram {}\nranks {}\nthreads {}\nseed {}\ncall {}\nchanging-calls {}\nsite {}\n",
                              kMagic, m.version, m.program, m.ranks, m.threads, m.seed, m.call, m.changing_calls,
                              m.site);
  for (const auto& a : m.arrays)
    t += fmt::format("array {} {} {} {} {}{}{}\n", a.id, a.tag, shape_text(a.shape), a.owner_state ? 1 : 0, a.rounds,
                     a.name.empty() ? "" : " ", a.name);
  for (std::size_t r = 0; r < m.journals.size(); ++r)
    t += fmt::format("journal {} {} {:016x}\n", r, m.journals[r].bytes, m.journals[r].checksum);
  return t + fmt::format("checksum {:016x}\n", detail::checkpoint_checksum(std::as_bytes(std::span(t.data(), t.size()))));
}

RunManifest parse_run_manifest(std::string_view text, const std::string& file) {
  RunManifest m;
  std::size_t line_no = 0, at = 0;
  bool magic = false, checksum_seen = false;
  std::set<std::string, std::less<>> seen;  // keys of the lines so far
  auto fail = [&](const std::string& why) {
    throw CheckpointError(fmt::format("{}:{}: {}", file, line_no, why));
  };
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      ++line_no;
      fail("the last line is cut off (torn write?)");
    }
    const std::string line(text.substr(at, end - at));
    const std::size_t line_start = at;
    at = end + 1;
    ++line_no;
    std::istringstream in(line);
    std::string key;
    in >> key;
    seen.insert(key);
    try {
      if (line_no == 1) {
        if (key != kMagic || !(in >> m.version) || m.version != 1)
          fail(fmt::format("not a run checkpoint manifest of version 1 (starts '{}')", line.substr(0, 40)));
        magic = true;
      } else if (key == "program") m.program = rest_of_line(in);
      else if (key == "ranks") in >> m.ranks;
      else if (key == "threads") in >> m.threads;
      else if (key == "seed") in >> m.seed;
      else if (key == "call") in >> m.call;
      else if (key == "changing-calls") in >> m.changing_calls;
      else if (key == "site") m.site = rest_of_line(in);
      else if (key == "array") {
        SavedArray a;
        std::string shape;
        int state = 0;
        if (!(in >> a.id >> a.tag >> shape >> state >> a.rounds)) fail("malformed array line");
        a.shape = parse_shape(shape);
        a.owner_state = state != 0;
        if (!in.eof()) a.name = rest_of_line(in);  // an unnamed array's line ends after its rounds
        m.arrays.push_back(a);
      } else if (key == "journal") {
        std::size_t r = 0;
        std::string sum;
        JournalPart j;
        if (!(in >> r >> j.bytes >> sum) || r != m.journals.size()) fail("malformed journal line");
        j.checksum = std::stoull(sum, nullptr, 16);
        m.journals.push_back(j);
      } else if (key == "checksum") {
        std::string sum;
        in >> sum;
        const auto want = detail::checkpoint_checksum(std::as_bytes(std::span(text.data(), line_start)));
        if (std::stoull(sum, nullptr, 16) != want) fail("the manifest's checksum does not match its text (corrupted)");
        checksum_seen = true;
        if (at != text.size()) fail("text after the checksum line");
      } else {
        fail(fmt::format("unknown key '{}'", key));
      }
    } catch (const std::logic_error&) {  // stoll / stoull
      fail("malformed number");
    }
    if (in.fail()) fail(fmt::format("malformed '{}' line", key));
  }
  if (!magic) fail("empty manifest");
  if (!checksum_seen) fail("no checksum line (torn write?)");
  // Every line format_run_manifest writes once: a manifest without one is damaged, and
  // would be written back with an empty value that does not parse.
  for (std::string_view k : {"program", "ranks", "threads", "seed", "call", "changing-calls", "site"})
    if (!seen.contains(k)) fail(fmt::format("no '{}' line", k));
  if (m.ranks < 1 || m.threads < 1 || m.call < 1 || static_cast<int>(m.journals.size()) != m.ranks)
    fail("ranks, threads, call or journals missing");
  return m;
}

Bytes encode_journal(const std::vector<CallRecord>& records) {
  Bytes out;
  detail::append<std::uint64_t>(out, records.size());
  for (const auto& r : records) {
    detail::append_string(out, r.site);
    detail::append<std::uint64_t>(out, r.states.size());
    for (const auto& s : r.states) {
      detail::append<std::uint64_t>(out, s.size());
      detail::append_span<std::byte>(out, s);
    }
  }
  return out;
}

std::vector<CallRecord> decode_journal(std::span<const std::byte> bytes, const std::string& file) {
  try {
    detail::Reader in(bytes);
    std::vector<CallRecord> out(static_cast<std::size_t>(in.get<std::uint64_t>()));
    if (out.size() > bytes.size()) throw CheckpointError(fmt::format("{}: malformed journal", file));
    for (auto& r : out) {
      r.site = in.get_string();
      r.states.resize(static_cast<std::size_t>(in.get<std::uint64_t>()));
      for (auto& s : r.states) {
        s.resize(static_cast<std::size_t>(in.get<std::uint64_t>()));
        in.get_span(std::span(s));
      }
    }
    if (in.remaining() != 0) throw CheckpointError(fmt::format("{}: bytes after the last record", file));
    return out;
  } catch (const InternalError&) {
    throw CheckpointError(fmt::format("{}: the journal ends in the middle of a record", file));
  } catch (const std::length_error&) {
    throw CheckpointError(fmt::format("{}: malformed journal", file));
  }
}

std::optional<ResumePoint> read_resume_point(Runtime& rt, const fs::path& root) {
  std::optional<ResumePoint> out;
  detail::all_or_none(rt.comm(), [&] {
    detail::typed<CheckpointError>([&] {
      if (!fs::is_directory(root))
        throw CheckpointError(fmt::format("resume from {}: no such directory", root.string()));
      fs::path dir = root;
      if (!fs::exists(root / detail::kManifestName)) {
        if (!fs::exists(root / kLatestName)) return;  // nothing checkpointed yet
        std::string name = read_text(root / kLatestName, 256);
        while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
        dir = root / name;
        if (name.empty() || !fs::is_directory(dir))
          throw CheckpointError(
              fmt::format("{}: names checkpoint '{}', which does not exist", (root / kLatestName).string(), name));
      }
      const fs::path manifest = dir / detail::kManifestName;
      if (!fs::exists(manifest))
        throw CheckpointError(fmt::format("{}: missing (not a checkpoint, or a torn one)", manifest.string()));
      ResumePoint p;
      p.dir = dir;
      p.manifest = parse_run_manifest(read_text(manifest, 1 << 24), manifest.string());
      if (p.manifest.program != program_name())
        throw CheckpointError(fmt::format("{}: written by program '{}', not by this one ('{}')", manifest.string(),
                                          p.manifest.program, program_name()));
      for (int r = 0; r < p.manifest.ranks; ++r) {
        const fs::path f = dir / fmt::format("journal-{}.bin", r);
        const auto& want = p.manifest.journals[static_cast<std::size_t>(r)];
        if (!fs::exists(f)) throw CheckpointError(fmt::format("{}: missing", f.string()));
        const Bytes b = detail::read_file(f, want.bytes + 1);
        if (b.size() != want.bytes)
          throw CheckpointError(fmt::format("{}: {} bytes, the manifest says {} (truncated or torn)", f.string(),
                                            b.size(), want.bytes));
        if (detail::checkpoint_checksum(b) != want.checksum)
          throw CheckpointError(fmt::format("{}: checksum does not match the manifest (corrupted)", f.string()));
        p.journals.push_back(decode_journal(b, f.string()));
        if (static_cast<std::int64_t>(p.journals.back().size()) != p.manifest.call)
          throw CheckpointError(fmt::format("{}: {} loop calls journaled, the manifest says {}", f.string(),
                                            p.journals.back().size(), p.manifest.call));
      }
      out = std::move(p);
    });
  });
  return out;
}

}  // namespace strata::recovery
