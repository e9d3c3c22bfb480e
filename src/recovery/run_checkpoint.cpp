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
using strata::printable;
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

bool digits(std::string_view s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// "array-12" or "state-12": the only directories a run checkpoint names.
bool is_nested_dir(std::string_view name) {
  for (std::string_view prefix : {"array-", "state-"})
    if (name.starts_with(prefix)) return digits(name.substr(prefix.size()));
  return false;
}

// "call-00000012", as checkpoint_name writes it: no separator, no "..".
bool is_checkpoint_name(std::string_view name) {
  return name.starts_with("call-") && name.size() >= 13 && digits(name.substr(5));
}

// A directory inside a checkpoint, which Strata creates as one: refused when it is a
// symbolic link (which could lead out of the checkpoint) or anything else.
void require_real_directory(const fs::path& p, const std::string& what) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (ec || st.type() == fs::file_type::not_found)
    throw CheckpointError(fmt::format("{}: {} is missing", p.string(), what));
  if (st.type() == fs::file_type::symlink)
    throw CheckpointError(fmt::format("{}: {} is a symbolic link; resuming reads only what lies inside the "
                                      "checkpoint directory",
                                      p.string(), what));
  if (st.type() != fs::file_type::directory)
    throw CheckpointError(fmt::format("{}: {} is not a directory", p.string(), what));
}

// Every file of a checkpoint is read without following a symbolic link (see Links).
std::string read_text(const fs::path& p, std::uint64_t limit) {
  const Bytes b = detail::read_file(p, limit, detail::Links::refuse);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

std::string checkpoint_name(std::int64_t call) { return fmt::format("call-{:08}", call); }
std::string saved_array_dir(std::uint64_t id) { return fmt::format("array-{}", id); }
std::string saved_state_dir(std::uint64_t id) { return fmt::format("state-{}", id); }

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
  for (const auto& n : m.nested) t += fmt::format("nested {} {:016x}\n", n.dir, n.checksum);
  for (const auto& b : m.settings) t += fmt::format("setting {} {}\n", b.name, b.value);
  for (std::size_t r = 0; r < m.journals.size(); ++r)
    t += fmt::format("journal {} {} {:016x}\n", r, m.journals[r].bytes, m.journals[r].checksum);
  return t + fmt::format("checksum {:016x}\n", detail::checkpoint_checksum(t));
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
        if (key != kMagic || !(in >> m.version))
          fail(fmt::format("not a run checkpoint manifest (starts '{}')", printable(line.substr(0, 40))));
        if (m.version != kRunManifestVersion)
          fail(fmt::format("a run checkpoint manifest of version {}; this build of Strata reads version {} only",
                           m.version, kRunManifestVersion));
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
      } else if (key == "nested") {
        NestedManifest n;
        std::string sum;
        if (!(in >> n.dir >> sum) || !is_nested_dir(n.dir)) fail("malformed nested line");
        n.checksum = std::stoull(sum, nullptr, 16);
        m.nested.push_back(n);
      } else if (key == "setting") {
        BoundSetting b;
        // The value is the rest of the line after one space, leading spaces and all (a
        // bound option may hold them); it may be empty, after the space all the same.
        if (!(in >> b.name) || in.get() != ' ') fail("malformed setting line");
        std::getline(in, b.value);
        in.clear();  // an empty value leaves getline at the end: not an error
        m.settings.push_back(b);
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
        const auto want = detail::checkpoint_checksum(text.substr(0, line_start));
        if (std::stoull(sum, nullptr, 16) != want) fail("the manifest's checksum does not match its text (corrupted)");
        checksum_seen = true;
        if (at != text.size()) fail("text after the checksum line");
      } else {
        fail(fmt::format("unknown key '{}'", printable(key)));
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
    // Every count is checked against the bytes left before it sizes a container (a
    // record takes at least 16 bytes, a state 8), so a crafted length cannot
    // allocate more than the file holds.
    std::vector<CallRecord> out(in.get_count(16));
    for (auto& r : out) {
      r.site = in.get_string();
      r.states.resize(in.get_count(8));
      for (auto& s : r.states) {
        s.resize(in.get_count(1));
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

namespace {

// The checkpoint `root` resumes from: root itself when it holds a run manifest, else
// the one root/latest names. Only a name checkpoint_name could have written is
// followed, and only to a real directory inside root. Nothing when root holds none yet.
std::optional<fs::path> checkpoint_to_resume(const fs::path& root) {
  if (!fs::is_directory(root))
    throw CheckpointError(fmt::format("resume from {}: no such directory", root.string()));
  std::error_code ec;
  if (fs::symlink_status(root / detail::kManifestName, ec).type() != fs::file_type::not_found) return root;
  const fs::path latest = root / kLatestName;
  if (fs::symlink_status(latest, ec).type() == fs::file_type::not_found) return std::nullopt;  // none yet
  std::string name = read_text(latest, 64);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  if (!is_checkpoint_name(name))
    throw CheckpointError(fmt::format("{}: names '{}', which is not a checkpoint of this directory (a name "
                                      "like {})",
                                      latest.string(), printable(name, 80), checkpoint_name(1)));
  const fs::path dir = root / name;
  require_real_directory(dir, fmt::format("the checkpoint {} names", latest.string()));
  return dir;
}

// The array and state directories must be the ones the run manifest was written with:
// each manifest's text has the checksum the run manifest lists.
void check_nested(const fs::path& dir, const RunManifest& m, const std::string& where) {
  auto listed = [&](const std::string& name) {
    for (const auto& n : m.nested)
      if (n.dir == name) return;
    throw CheckpointError(fmt::format("{}: lists no manifest checksum for {} (damaged?)", where, name));
  };
  for (const auto& a : m.arrays) {
    listed(saved_array_dir(a.id));
    if (a.owner_state) listed(saved_state_dir(a.id));
  }
  for (const auto& n : m.nested) {
    require_real_directory(dir / n.dir, "a directory the run manifest lists");
    const fs::path f = dir / n.dir / detail::kManifestName;
    const std::string text = read_text(f, detail::kMaxManifestBytes);
    if (detail::checkpoint_checksum(text) != n.checksum)
      throw CheckpointError(fmt::format("{}: does not belong to this checkpoint: its checksum differs from the one "
                                        "{} lists (replaced or damaged)",
                                        f.string(), where));
  }
}

}  // namespace

std::optional<ResumePoint> read_resume_point(Runtime& rt, const fs::path& root, Origin origin) {
  std::optional<ResumePoint> out;
  detail::all_or_none(rt.comm(), [&] {
    detail::typed<CheckpointError>([&] {
      const std::optional<fs::path> dir = checkpoint_to_resume(root);
      if (!dir) return;  // nothing checkpointed yet
      const fs::path manifest = *dir / detail::kManifestName;
      ResumePoint p;
      p.dir = *dir;
      p.manifest = parse_run_manifest(read_text(manifest, detail::kMaxManifestBytes), manifest.string());
      if (origin == Origin::this_run && p.manifest.program != program_name())
        throw CheckpointError(fmt::format("{}: written by program '{}', not by this one ('{}')", manifest.string(),
                                          printable(p.manifest.program, 80), program_name()));
      if (origin == Origin::this_run && p.manifest.seed != rt.seed())
        throw CheckpointError(fmt::format("{}: written by a run with seed {}; this run's seed is {} (--strata-seed, "
                                          "STRATA_SEED)",
                                          manifest.string(), p.manifest.seed, rt.seed()));
      check_nested(*dir, p.manifest, manifest.string());
      for (int r = 0; r < p.manifest.ranks; ++r) {
        const fs::path f = *dir / fmt::format("journal-{}.bin", r);
        const auto& want = p.manifest.journals[static_cast<std::size_t>(r)];
        if (!fs::exists(f)) throw CheckpointError(fmt::format("{}: missing", f.string()));
        const Bytes b = detail::read_file(f, want.bytes + 1, detail::Links::refuse);
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
