#include "recovery/execution_record.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "strata/io/files.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/buffer_base.hpp"
#include "strata/relaxed.hpp"
#include "recovery/run_checkpoint.hpp"
#include "strata/runtime.hpp"

namespace strata::recovery {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRecord = "record.txt";

std::string order_file(std::int64_t id) { return fmt::format("order-{}.bin", id); }
std::string versions_file(std::int64_t call) { return fmt::format("versions-{}.bin", call); }
std::string timing_file(std::int64_t call, int rank) { return fmt::format("timing-{}-{}.bin", call, rank); }

std::string ids_text(const std::vector<std::uint64_t>& ids) {
  if (ids.empty()) return "-";
  std::string s;
  for (const auto id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

std::vector<std::uint64_t> parse_ids(const std::string& s) {
  std::vector<std::uint64_t> out;
  if (s == "-") return out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) out.push_back(std::stoull(part));
  return out;
}

struct Header {
  std::string program;
  int ranks = 0, threads = 0;
};

// record.txt: "strata-record 2", "program P", "ranks R", "threads T", then
// "call N SITE order K buffers IDS relaxed IDS changed ID:HEX ..." lines.
std::vector<RecordedCall> read_record(const fs::path& file, Header& h) {
  std::ifstream in(file);
  if (!in) throw ReplayError(fmt::format("{}: cannot open the record", file.string()));
  std::vector<RecordedCall> calls;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    bool ok = true;
    try {
      if (line_no == 1) {
        if (key == "strata-record" && line != "strata-record 2")
          throw ReplayError(fmt::format("{}: a record of another format ('{}'; this Strata reads 'strata-record 2')",
                                        file.string(), line));
        ok = line == "strata-record 2";
      }
      else if (key == "program") ok = static_cast<bool>(ls >> h.program);
      else if (key == "ranks") ok = static_cast<bool>(ls >> h.ranks);
      else if (key == "threads") ok = static_cast<bool>(ls >> h.threads);
      else if (key == "call") {
        RecordedCall c;
        std::string w1, order, w2, buffers, w3, relaxed, w4, pair;
        ok = static_cast<bool>(ls >> c.call >> c.site >> w1 >> order >> w2 >> buffers >> w3 >> relaxed >> w4) &&
             w1 == "order" && w2 == "buffers" && w3 == "relaxed" && w4 == "changed" &&
             c.call == static_cast<std::int64_t>(calls.size()) + 1;
        if (ok) {
          c.order = order == "-" ? 0 : std::stoll(order);
          c.buffers = parse_ids(buffers);
          c.relaxed = parse_ids(relaxed);
          while (ls >> pair) {
            const auto colon = pair.find(':');
            if (colon == std::string::npos) throw std::invalid_argument("pair");
            c.changed.emplace_back(std::stoull(pair.substr(0, colon)), std::stoull(pair.substr(colon + 1), nullptr, 16));
          }
          calls.push_back(std::move(c));
        }
      } else {
        ok = false;
      }
    } catch (const std::logic_error&) {
      ok = false;
    }
    if (!ok) throw ReplayError(fmt::format("{}:{}: malformed record line '{}'", file.string(), line_no, line));
  }
  if (line_no < 4 || h.ranks < 1 || h.threads < 1)
    throw ReplayError(fmt::format("{}: not a complete record (no header)", file.string()));
  return calls;
}

}  // namespace

ExecutionRecord::ExecutionRecord(Runtime& rt) : rt_(rt) {
  const auto& o = rt.options();
  if (!o.record_dir.empty() && !o.replay_dir.empty())
    throw OptionError("--strata-record and --strata-replay cannot be given together");
  if ((!o.record_dir.empty() || !o.replay_dir.empty()) && !o.resume_dir.empty())
    throw OptionError("--strata-resume cannot be combined with --strata-record or --strata-replay: a record covers a "
                      "run from its start");
  if (!o.record_dir.empty()) {
    mode_ = Mode::record;
    dir_ = o.record_dir;
    detail::all_or_none(rt.comm(), [&] {
      if (rt.rank() != 0) return;
      std::error_code ec;
      fs::create_directories(dir_, ec);
      // Written as record.txt.tmp, created afresh (a symlink planted at either name is
      // replaced, never written through), and renamed into place once it has its header;
      // the calls are appended to the same open file as they end.
      const fs::path record = fs::path(dir_) / kRecord, tmp = fs::path(dir_) / (std::string(kRecord) + ".tmp");
      const int fd = detail::create_new_file(tmp);
      out_ = ::fdopen(fd, "w");
      if (!out_) {
        ::close(fd);
        throw IoError(fmt::format("{}: cannot create the record", record.string()));
      }
      std::fprintf(out_, "strata-record 2\nprogram %s\nranks %d\nthreads %d\n", program_name().c_str(), rt.size(),
                   rt.threads());
      if (std::fflush(out_) != 0) throw IoError(fmt::format("{}: cannot write the record", record.string()));
      if (::rename(tmp.c_str(), record.c_str()) != 0)
        throw IoError(fmt::format("{}: cannot rename the record into place: {}", record.string(),
                                  detail::errno_text(errno)));
    });
  } else if (!o.replay_dir.empty()) {
    dir_ = o.replay_dir;
    Header h;
    detail::all_or_none(rt.comm(), [&] { calls_ = read_record(fs::path(dir_) / kRecord, h); });
    if (h.program != program_name())
      throw ReplayError(fmt::format("{}: recorded by program '{}', not by this one ('{}')", dir_, h.program,
                                    program_name()));
    ranks_ = h.ranks;
    threads_ = h.threads;
    if (h.ranks == rt.size() && h.threads == rt.threads()) mode_ = Mode::replay;
    else if (rt.size() == 1 && rt.threads() == 1) mode_ = Mode::serial_replay;
    else
      throw ReplayError(fmt::format("{}: recorded on {} rank(s) x {} thread(s); replay it on the same, or in one "
                                    "process with one thread (--strata-threads=1, no mpirun)",
                                    dir_, h.ranks, h.threads));
  }
}

ExecutionRecord::~ExecutionRecord() {
  if (out_) std::fclose(out_);
}

std::int64_t ExecutionRecord::order_of(std::uint64_t key) const {
  const auto it = orders_.find(key);
  return it == orders_.end() ? 0 : it->second;
}

// order-<k>.bin: dims, clocks, then dims + 2 values per iteration (all int64).
std::int64_t ExecutionRecord::write_order(std::uint64_t key, const RecordedSchedule& schedule) {
  const auto id = static_cast<std::int64_t>(orders_.size()) + 1;
  detail::all_or_none(rt_.comm(), [&] {
    if (rt_.rank() != 0) return;
    Bytes b;
    detail::append<std::int64_t>(b, schedule.dims);
    detail::append<std::int64_t>(b, schedule.clocks);
    detail::append_span<std::int64_t>(b, schedule.rows);
    detail::write_file_replacing(fs::path(dir_) / order_file(id), b);
  });
  orders_[key] = id;
  return id;
}

const RecordedCall& ExecutionRecord::expect(std::int64_t call, const std::string& site) const {
  if (call > static_cast<std::int64_t>(calls_.size()))
    throw ReplayError(fmt::format("replay of {}: this run makes loop call {} at {}, the record ends after {} call(s)",
                                  dir_, call, site, calls_.size()));
  const RecordedCall& c = calls_[static_cast<std::size_t>(call - 1)];
  if (c.site != site)
    throw ReplayError(fmt::format("replay of {}: loop call {} is at {} in this run, at {} in the record (another "
                                  "program, or other options?)",
                                  dir_, call, site, c.site));
  return c;
}

RecordedSchedule ExecutionRecord::schedule(const RecordedCall& c, int dims) const {
  if (c.order == 0)
    throw ReplayError(fmt::format("replay of {}: loop call {} at {} has no recorded schedule", dir_, c.call, c.site));
  const fs::path f = fs::path(dir_) / order_file(c.order);
  const Bytes b = detail::read_file(f, fs::exists(f) ? fs::file_size(f) : 0);
  const std::size_t row = sizeof(std::int64_t) * static_cast<std::size_t>(dims + 2), head = 2 * sizeof(std::int64_t);
  if (b.size() < head || (b.size() - head) % row != 0)
    throw ReplayError(fmt::format("{}: missing or truncated", f.string()));
  detail::Reader in(b);
  RecordedSchedule s;
  s.dims = dims;
  if (in.get<std::int64_t>() != dims)
    throw ReplayError(fmt::format("{}: holds indices of another dimension count", f.string()));
  s.clocks = in.get<std::int64_t>();
  s.rows.resize((b.size() - head) / sizeof(std::int64_t));
  in.get_span(std::span(s.rows));
  const std::int64_t workers = static_cast<std::int64_t>(ranks_) * threads_;
  std::int64_t last_clock = 0;
  for (std::size_t k = 0; k < s.iterations(); ++k) {
    const auto r = s.row(k);
    const std::int64_t worker = r[static_cast<std::size_t>(dims)], clock = r[static_cast<std::size_t>(dims) + 1];
    if (worker < 0 || worker >= workers || clock < last_clock || clock >= s.clocks)
      throw ReplayError(fmt::format("{}: iteration {} has worker {} and clock {} (the record has {} worker(s), {} "
                                    "clock(s), clocks in order)",
                                    f.string(), k, worker, clock, workers, s.clocks));
    last_clock = clock;
  }
  return s;
}

bool records_cache_versions(const Consistency& c) { return c.staleness > 0 && !c.is_managed(); }
bool values_depend_on_timing(const Consistency& c) { return c.is_managed() || c.folds(); }

// timing-<n>-<r>.bin: rank r's logs of the call's relaxed arrays whose values depend
// on timing, one after another (ps/timing_log.hpp). Each rank writes its own.
void ExecutionRecord::write_timing(std::int64_t call, const std::vector<std::uint64_t>& relaxed) {
  Bytes file;
  bool any = false;
  for (const auto id : relaxed) {
    detail::RelaxedBase* t = detail::BufferBase::relaxed_table(id);
    if (!t || !values_depend_on_timing(t->consistency())) continue;
    any = true;
    const Bytes part = t->take_timing_log();
    file.insert(file.end(), part.begin(), part.end());
  }
  if (!any) return;  // the same on every rank: their arrays are the same
  detail::all_or_none(rt_.comm(), [&] {
    detail::write_file_replacing(fs::path(dir_) / timing_file(call, rt_.rank()), file);
  });
}

RecordedTiming ExecutionRecord::timing(const RecordedCall& c, std::uint64_t array_id, std::vector<Bytes>& files) const {
  if (files.empty())
    for (int r = 0; r < ranks_; ++r) {
      const fs::path f = fs::path(dir_) / timing_file(c.call, r);
      if (!fs::exists(f))
        throw ReplayError(fmt::format("{}: missing; loop call {} at {} read relaxed arrays whose values depend on "
                                      "timing, which a record logs there",
                                      f.string(), c.call, c.site));
      files.push_back(detail::read_file(f, fs::file_size(f)));
    }
  RecordedTiming out;
  const std::size_t word = sizeof(std::int64_t);
  for (int r = 0; r < ranks_; ++r) {
    const std::string name = (fs::path(dir_) / timing_file(c.call, r)).string();
    auto corrupt = [&] { return ReplayError(fmt::format("{}: truncated or corrupt", name)); };
    const Bytes& b = files[static_cast<std::size_t>(r)];
    detail::Reader in(b);
    auto count = [&] {
      if (in.remaining() < word) throw corrupt();
      const auto n = in.get<std::int64_t>();
      if (n < 0) throw corrupt();
      return n;
    };
    auto part = [&](std::int64_t n, std::size_t entry) {
      if (entry == 0 || static_cast<std::size_t>(n) > in.remaining() / entry) throw corrupt();
      RecordedTiming::Part p{n, in.take(static_cast<std::size_t>(n) * entry)};
      const std::size_t at = b.size() - in.remaining(), pad = (8 - at % 8) % 8;  // to the next multiple of 8
      if (in.remaining() < pad) throw corrupt();
      in.take(pad);
      return p;
    };
    bool found = false;
    while (in.remaining() > 0) {
      const auto id = static_cast<std::uint64_t>(count());
      const auto unit_bytes = static_cast<std::size_t>(count()), element_bytes = static_cast<std::size_t>(count());
      const std::int64_t threads = count();
      if (threads != threads_ || element_bytes == 0 || unit_bytes % element_bytes != 0) throw corrupt();
      const bool mine = id == array_id;
      if (mine) {
        found = true;
        out.unit_bytes = unit_bytes;
        out.element_bytes = element_bytes;
      }
      for (std::int64_t t = 0; t < threads; ++t) {
        auto p = part(count(), word + unit_bytes);
        if (mine) out.reads.push_back(p);
      }
      auto p = part(count(), 2 * word + element_bytes);
      if (mine) out.applies.push_back(p);
    }
    if (!found)
      throw ReplayError(fmt::format("{}: holds no log of relaxed array #{} of loop call {} at {}", name, array_id,
                                    c.call, c.site));
  }
  return out;
}

// versions-<n>.bin, per array: its id, its clocks, then per rank that many versions
// (all int64). Written only for calls that have such arrays.
void ExecutionRecord::write_versions(std::int64_t call, const std::vector<std::uint64_t>& relaxed) {
  Bytes file;
  for (const auto id : relaxed) {
    const detail::RelaxedBase* t = detail::BufferBase::relaxed_table(id);
    if (!t || !records_cache_versions(t->consistency())) continue;
    Bytes mine;
    detail::append_span<std::int64_t>(mine, t->cache_versions());
    const auto all = rt_.comm().allgatherv(mine);
    detail::append<std::int64_t>(file, static_cast<std::int64_t>(id));
    detail::append<std::int64_t>(file, static_cast<std::int64_t>(t->cache_versions().size()));
    for (const auto& part : all) {
      STRATA_CHECK(part.size() == t->cache_versions().size() * sizeof(std::int64_t), "ranks ran different clocks");
      file.insert(file.end(), part.begin(), part.end());
    }
  }
  if (file.empty()) return;
  detail::all_or_none(rt_.comm(), [&] {
    if (rt_.rank() == 0) detail::write_file_replacing(fs::path(dir_) / versions_file(call), file);
  });
}

RecordedVersions ExecutionRecord::cache_versions(const RecordedCall& c, std::uint64_t array_id) const {
  const fs::path f = fs::path(dir_) / versions_file(c.call);
  if (!fs::exists(f))
    throw ReplayError(fmt::format("{}: missing; loop call {} at {} read stale-synchronous relaxed arrays, whose cache "
                                  "versions a record keeps there",
                                  f.string(), c.call, c.site));
  const Bytes b = detail::read_file(f, fs::file_size(f));
  detail::Reader in(b);
  const std::size_t word = sizeof(std::int64_t);
  auto corrupt = [&] { return ReplayError(fmt::format("{}: truncated or corrupt", f.string())); };
  while (in.remaining() > 0) {
    if (in.remaining() < 2 * word) throw corrupt();
    const auto id = static_cast<std::uint64_t>(in.get<std::int64_t>());
    const std::int64_t clocks = in.get<std::int64_t>();
    if (clocks < 1 || in.remaining() / word / static_cast<std::size_t>(ranks_) < static_cast<std::size_t>(clocks))
      throw corrupt();
    RecordedVersions v{ranks_, clocks, std::vector<std::int64_t>(static_cast<std::size_t>(clocks * ranks_))};
    in.get_span(std::span(v.values));
    if (id == array_id) return v;
  }
  throw ReplayError(fmt::format("{}: holds no cache versions for relaxed array #{} of loop call {} at {}", f.string(),
                                array_id, c.call, c.site));
}

void ExecutionRecord::after_call(std::int64_t call, const std::string& site, const CallOutcome& outcome) {
  if (mode_ == Mode::off) return;
  if (mode_ == Mode::record) {
    write_versions(call, outcome.relaxed);
    write_timing(call, outcome.relaxed);
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> prints;
  const std::vector<std::uint64_t>* ids = &outcome.changed;
  std::vector<std::uint64_t> recorded;
  if (mode_ != Mode::record) {
    for (const auto& [id, print] : calls_[static_cast<std::size_t>(call - 1)].changed) recorded.push_back(id);
    ids = &recorded;
  }
  for (const auto id : *ids)
    if (auto* a = detail::ArrayBase::find_array(id)) prints.emplace_back(id, a->content_fingerprint());
  if (mode_ == Mode::record) {
    if (rt_.rank() != 0) return;
    std::string line = fmt::format("call {} {} order {} buffers {} relaxed {} changed", call, site,
                                   outcome.order ? std::to_string(outcome.order) : "-", ids_text(outcome.buffers),
                                   ids_text(outcome.relaxed));
    for (const auto& [id, print] : prints) line += fmt::format(" {}:{:016x}", id, print);
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    return;
  }
  const RecordedCall& c = calls_[static_cast<std::size_t>(call - 1)];
  for (const auto& [id, want] : c.changed) {
    const auto it = std::find_if(prints.begin(), prints.end(), [&](const auto& p) { return p.first == id; });
    auto* a = detail::ArrayBase::find_array(id);
    const std::string label = a ? detail::array_label(*a) : fmt::format("array #{}", id);
    if (it == prints.end())
      throw ReplayError(fmt::format("replay of {}: after loop call {} at {}, {} does not exist in this run", dir_,
                                    call, site, label));
    if (it->second != want)
      throw ReplayError(fmt::format("replay of {}: after loop call {} at {}, {} differs from the record (fingerprint "
                                    "{:016x}, recorded {:016x})",
                                    dir_, call, site, label, it->second, want));
  }
}

}  // namespace strata::recovery
