// The checkpoint manifest: its text format, parsing with line-accurate errors, and
// the layouts (saved and reloaded) it describes.
#include <xxhash.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/detail/huge_pages.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace strata::detail {

std::uint64_t checkpoint_checksum(std::span<const std::byte> data) {
  return XXH3_64bits(data.data(), data.size());
}

std::string checkpoint_part_name(int part) {
  return fmt::format("part-{:05d}.bin", part);
}

Distribution CheckpointManifest::saved_distribution() const {
  return Distribution(partition, shape, ranks);
}

Partition CheckpointManifest::partition_for(int new_ranks) const {
  const Partition& p = partition;
  switch (p.kind()) {
    case Partition::Kind::range:
      if (explicit_bounds && p.bounds().size() == static_cast<std::size_t>(new_ranks) + 1) return p;
      return Partition::range(p.dim());
    case Partition::Kind::block2d:
      if (p.grid_rows() > 0 && new_ranks % p.grid_rows() == 0) return p;
      return Partition::block2d(p.dim(), p.dim1());
    case Partition::Kind::hash:
      return Partition::hash(p.dim());
  }
  return Partition::range(0);
}

namespace {

const char* kind_name(Partition::Kind k) {
  switch (k) {
    case Partition::Kind::range:
      return "range";
    case Partition::Kind::block2d:
      return "block2d";
    case Partition::Kind::hash:
      return "hash";
  }
  return "?";
}

constexpr std::string_view kSelfKey = "manifest_xxh3";
// Larger elements are not meant to be array elements; the bound keeps the record size
// (element plus up to 4 indices) and every product with it far from overflow.
constexpr std::uint64_t kMaxElementSize = std::uint64_t{1} << 30;

// One manifest line being parsed: every failure names the file and the line.
struct ManifestLine {
  const std::string& file;
  std::int64_t number;
  std::string_view text;

  [[noreturn]] void fail(const std::string& why) const {
    throw CheckpointError(fmt::format("checkpoint manifest {} is malformed at line {} ('{}'): {}",
                                      file, number, text.substr(0, 120), why));
  }

  template <class I>
  I integer(std::string_view s, int base = 10) const {
    I v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
      fail(fmt::format("'{}' is not a valid number", s));
    return v;
  }

  std::vector<std::int64_t> list(std::string_view s) const {
    std::vector<std::int64_t> out;
    if (s.empty()) return out;
    for (std::size_t at = 0;;) {
      const std::size_t comma = s.find(',', at);
      out.push_back(integer<std::int64_t>(
          s.substr(at, comma == std::string_view::npos ? s.npos : comma - at)));
      if (comma == std::string_view::npos) return out;
      at = comma + 1;
    }
  }

  std::vector<std::string_view> words(std::string_view s) const {
    std::vector<std::string_view> out;
    for (std::size_t at = 0; at <= s.size();) {
      const std::size_t sp = std::min(s.find(' ', at), s.size());
      out.push_back(s.substr(at, sp - at));
      at = sp + 1;
    }
    return out;
  }
};

std::string hex(std::uint64_t v) {
  return fmt::format("{:016x}", v);
}

}  // namespace

std::string format_manifest(const CheckpointManifest& m) {
  if (m.type_tag.find_first_of("\r\n") != std::string::npos)
    throw CheckpointError(
        fmt::format("checkpoint type tag '{}' must be a single line", m.type_tag));
  const Partition& p = m.partition;
  std::string s =
      "# strata checkpoint: one part file per writing rank, sizes in bytes, XXH3-64 checksums\n";
  s += fmt::format("version={}\n", m.version);
  s += fmt::format("element_size={}\n", m.element_size);
  s += fmt::format("type={}\n", m.type_tag);
  s += fmt::format("dims={}\n", m.dims);
  s += fmt::format("shape={}\n", fmt::join(m.shape, ","));
  s += fmt::format("storage={}\n", m.sparse ? "sparse" : "dense");
  s += fmt::format("partition={}\n", kind_name(p.kind()));
  s += fmt::format("partition_dims={},{}\n", p.dim(), p.dim1());
  s += fmt::format("partition_grid_rows={}\n", p.grid_rows());
  s += fmt::format("partition_bounds={}\n", fmt::join(p.bounds(), ","));
  s += fmt::format("partition_explicit={}\n", m.explicit_bounds ? "yes" : "no");
  s += fmt::format("ranks={}\n", m.ranks);
  s += fmt::format("nnz={}\n", m.nnz);
  for (std::size_t k = 0; k < m.parts.size(); ++k)
    s += fmt::format("part={} {} {} {}\n", k, m.parts[k].file, m.parts[k].bytes,
                     hex(m.parts[k].checksum));
  s += fmt::format("{}={}\n", kSelfKey,
                   hex(checkpoint_checksum(s)));
  return s;
}

CheckpointManifest parse_manifest(std::string_view text, const std::string& file) {
  CheckpointManifest m;
  std::map<std::string, std::int64_t, std::less<>> seen;  // key -> line
  std::optional<Partition::Kind> kind;
  int dim0 = 0, dim1 = 1, grid_rows = 0;
  std::vector<std::int64_t> bounds;
  bool self_checked = false;
  std::int64_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos)
      throw CheckpointError(
          fmt::format("checkpoint manifest {} is truncated: line {} has no end", file, number + 1));
    const ManifestLine line{file, ++number, text.substr(at, nl - at)};
    const std::size_t line_start = at;
    at = nl + 1;
    if (self_checked) line.fail(fmt::format("text after the {} line", kSelfKey));
    if (line.text.empty() || line.text.front() == '#') continue;
    const std::size_t eq = line.text.find('=');
    if (eq == std::string_view::npos) line.fail("expected key=value");
    const std::string_view key = line.text.substr(0, eq), value = line.text.substr(eq + 1);
    if (key != "part" && !seen.emplace(std::string(key), number).second) line.fail("duplicate key");
    if (key == kSelfKey) {
      const auto want = line.integer<std::uint64_t>(value, 16);
      const auto got = checkpoint_checksum(text.substr(0, line_start));
      if (want != got)
        throw CheckpointError(
            fmt::format("checkpoint manifest {} is corrupted: checksum mismatch (recorded {}, "
                        "computed {})",
                        file, hex(want), hex(got)));
      self_checked = true;
    } else if (key == "version") {
      m.version = line.integer<int>(value);
      if (m.version != kCheckpointVersion)
        line.fail(fmt::format("unsupported format version (this build reads version {})",
                              kCheckpointVersion));
    } else if (key == "element_size") {
      m.element_size = line.integer<std::uint64_t>(value);
      if (m.element_size == 0 || m.element_size > kMaxElementSize)
        line.fail(fmt::format("element_size must be 1 to {} bytes", kMaxElementSize));
    } else if (key == "type") {
      // A tag format_manifest would refuse to write (lines end at '\n' only, so '\r'
      // is the one that can get here) is refused here too.
      if (value.find('\r') != std::string_view::npos) line.fail("the type tag must be a single line");
      m.type_tag = std::string(value);
    } else if (key == "dims") {
      m.dims = line.integer<std::uint64_t>(value);
      if (m.dims < 1 || m.dims > 4) line.fail("dims must be 1 to 4");
    } else if (key == "shape") {
      m.shape = line.list(value);
      for (auto e : m.shape)
        if (e < 0) line.fail("negative extent");
    } else if (key == "storage") {
      if (value != "dense" && value != "sparse") line.fail("storage must be dense or sparse");
      m.sparse = value == "sparse";
    } else if (key == "partition") {
      if (value == "range")
        kind = Partition::Kind::range;
      else if (value == "block2d")
        kind = Partition::Kind::block2d;
      else if (value == "hash")
        kind = Partition::Kind::hash;
      else
        line.fail("partition must be range, block2d or hash");
    } else if (key == "partition_dims") {
      const auto d = line.list(value);
      if (d.size() != 2) line.fail("expected two dimensions");
      dim0 = static_cast<int>(d[0]);
      dim1 = static_cast<int>(d[1]);
    } else if (key == "partition_grid_rows") {
      grid_rows = line.integer<int>(value);
    } else if (key == "partition_bounds") {
      bounds = line.list(value);
    } else if (key == "partition_explicit") {
      if (value != "yes" && value != "no") line.fail("expected yes or no");
      m.explicit_bounds = value == "yes";
    } else if (key == "ranks") {
      m.ranks = line.integer<int>(value);
      if (m.ranks < 1) line.fail("ranks must be at least 1");
    } else if (key == "nnz") {
      m.nnz = line.integer<std::int64_t>(value);
    } else if (key == "part") {
      const auto w = line.words(value);
      if (w.size() != 4) line.fail("expected: part=INDEX FILE BYTES CHECKSUM");
      const auto index = line.integer<std::size_t>(w[0]);
      if (index != m.parts.size()) line.fail(fmt::format("expected part {} here", m.parts.size()));
      if (w[1] != checkpoint_part_name(static_cast<int>(index)))
        line.fail(fmt::format("part {} must be named {}", index,
                              checkpoint_part_name(static_cast<int>(index))));
      m.parts.push_back({std::string(w[1]), line.integer<std::uint64_t>(w[2]),
                         line.integer<std::uint64_t>(w[3], 16)});
    } else {
      line.fail(fmt::format("unknown key '{}'", key));
    }
  }
  if (!self_checked)
    throw CheckpointError(fmt::format(
        "checkpoint manifest {} is truncated: its last line ({}=...) is missing", file, kSelfKey));
  for (const char* k : {"version", "element_size", "type", "dims", "shape", "storage", "partition",
                        "partition_dims", "partition_grid_rows", "partition_bounds",
                        "partition_explicit", "ranks", "nnz"})
    if (!seen.contains(k))
      throw CheckpointError(fmt::format("checkpoint manifest {} has no '{}' line", file, k));
  auto inconsistent = [&](const std::string& why) {
    return CheckpointError(fmt::format("checkpoint manifest {} is inconsistent: {}", file, why));
  };
  if (m.shape.size() != m.dims)
    throw inconsistent(fmt::format("shape has {} extents for {} dims", m.shape.size(), m.dims));
  if (m.parts.size() != static_cast<std::size_t>(m.ranks))
    throw inconsistent(fmt::format("{} parts listed for {} ranks", m.parts.size(), m.ranks));
  // The partition must be one (block2d refuses equal dimensions) and the saved layout
  // must resolve, both as CheckpointError; every part must hold exactly what it claims.
  Distribution saved;
  try {
    if (*kind == Partition::Kind::range)
      m.partition = Partition::range(dim0, bounds);
    else if (*kind == Partition::Kind::block2d)
      m.partition = Partition::block2d(dim0, dim1, grid_rows);
    else
      m.partition = Partition::hash(dim0);
    saved = m.saved_distribution();
  } catch (const Error& e) {
    throw inconsistent(e.what());
  }
  const std::uint64_t rec = m.record_size();
  if (rec == 0) throw inconsistent("element_size is 0");
  // Sizes are multiplied with overflow checks: every figure is read from a file that
  // may be damaged or crafted. A dense array's parts must add up to the whole array
  // before any part's box is computed (a hash partition enumerates its rows).
  std::int64_t elements = 1, listed = 0, whole_bytes = 0;
  for (auto e : m.shape)
    if (__builtin_mul_overflow(elements, e, &elements))
      throw inconsistent(fmt::format("shape {} has more elements than 2^63", fmt::join(m.shape, "x")));
  for (const auto& part : m.parts)
    if (part.bytes > static_cast<std::uint64_t>(INT64_MAX) ||
        __builtin_add_overflow(listed, static_cast<std::int64_t>(part.bytes), &listed))
      throw inconsistent(fmt::format("{} is listed with {} bytes, more than a file can hold", part.file, part.bytes));
  if (m.nnz < 0 || m.nnz > elements)
    throw inconsistent(fmt::format("nnz {} does not fit a shape of {} elements", m.nnz, elements));
  if (__builtin_mul_overflow(m.nnz, static_cast<std::int64_t>(rec), &whole_bytes))
    throw inconsistent(fmt::format("{} elements of {} bytes are more than 2^63 bytes", m.nnz, rec));
  if (whole_bytes != listed)
    throw inconsistent(fmt::format("parts hold {} bytes but {} elements of {} bytes take {}", listed, m.nnz, rec,
                                   whole_bytes));
  if (!m.sparse && m.nnz != elements)
    throw inconsistent(fmt::format("a dense array of shape {} holds {} elements, not nnz {}",
                                   fmt::join(m.shape, "x"), elements, m.nnz));
  // Each part is read whole into memory; one larger than the machine cannot be, and
  // refusing it here also spares enumerating a huge hash partition's rows below.
  const std::uint64_t memory = machine_memory();
  for (const auto& part : m.parts)
    if (part.bytes > memory)
      throw CheckpointError(fmt::format("checkpoint manifest {}: {} is listed with {} bytes, more than this "
                                        "machine's memory ({} bytes)",
                                        file, part.file, part.bytes, memory));
  std::int64_t stored = 0;
  for (int r = 0; r < m.ranks; ++r) {
    const auto& part = m.parts[static_cast<std::size_t>(r)];
    std::int64_t expect = -1;
    if (!m.sparse) {
      expect = 1;
      for (const auto& s : saved.box(r)) expect *= s.size();
    }
    if (part.bytes % rec != 0 ||
        (expect >= 0 && part.bytes != static_cast<std::uint64_t>(expect) * rec))
      throw inconsistent(
          fmt::format("{} is listed with {} bytes, which does not fit its part of the array",
                      part.file, part.bytes));
    stored += static_cast<std::int64_t>(part.bytes / rec);
  }
  if (stored != m.nnz)
    throw inconsistent(fmt::format("parts hold {} elements but nnz is {}", stored, m.nnz));
  return m;
}

}  // namespace strata::detail
