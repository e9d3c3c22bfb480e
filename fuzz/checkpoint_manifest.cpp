// The checkpoint manifest reader (detail::parse_manifest), on the input as it is and,
// when the first byte says so, "sealed": cut at its first manifest_xxh3= line and given
// the checksum line its text needs, so that the fuzzer gets past the checksum to the
// fields and their consistency.
//   * a manifest is rejected only with CheckpointError naming the file;
//   * an accepted one is consistent: version 1, 1 to 4 dims with as many non-negative
//     extents, a part per writing rank named as the writer names it, whole records in
//     every part, a dense part holding exactly its box of the saved layout (the
//     product computed without overflow), as many elements in all as nnz; its saved
//     layout resolves, and so does the layout for 1 to 8 reading ranks;
//   * format_manifest of it parses back to the same manifest and the same text.
#include <span>
#include <string>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "manifest_seal.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace {

using strata::detail::CheckpointManifest;
__extension__ typedef unsigned __int128 u128;  // products of up to four 64-bit figures, exactly

constexpr const char* kFile = "ckpt/manifest.txt";

void check_consistent(const CheckpointManifest& m) {
  FUZZ_CHECK(m.version == 1 && m.dims >= 1 && m.dims <= 4 && m.shape.size() == m.dims, "version, dims or shape");
  for (auto e : m.shape) FUZZ_CHECK(e >= 0, "a negative extent");
  FUZZ_CHECK(m.ranks >= 1 && m.parts.size() == static_cast<std::size_t>(m.ranks), "a part per rank");
  const std::uint64_t rec = m.record_size();
  FUZZ_CHECK(rec > 0, "an empty record");
  const strata::Distribution saved = m.saved_distribution();
  u128 elements = 0;
  for (int r = 0; r < m.ranks; ++r) {
    const auto& part = m.parts[static_cast<std::size_t>(r)];
    FUZZ_CHECK(part.file == strata::detail::checkpoint_part_name(r), "a part named otherwise");
    FUZZ_CHECK(part.bytes % rec == 0, "a part of partial records");
    elements += part.bytes / rec;
    if (m.sparse) continue;
    u128 bytes = rec;  // the box's volume times the record; stops growing once past 64 bits
    for (const auto& s : saved.box(r)) {
      bytes *= static_cast<std::uint64_t>(s.size());
      if (bytes > ~std::uint64_t{0}) break;
    }
    FUZZ_CHECK(bytes == part.bytes, "a dense part that does not hold its box");
  }
  FUZZ_CHECK(elements == static_cast<u128>(m.nnz), "parts that do not add up to nnz");
  for (int ranks = 1; ranks <= 8; ++ranks) strata::Distribution(m.partition_for(ranks), m.shape, ranks);
}

bool same(const CheckpointManifest& a, const CheckpointManifest& b) {
  bool parts = a.parts.size() == b.parts.size();
  for (std::size_t k = 0; parts && k < a.parts.size(); ++k)
    parts = a.parts[k].file == b.parts[k].file && a.parts[k].bytes == b.parts[k].bytes &&
            a.parts[k].checksum == b.parts[k].checksum;
  return parts && a.version == b.version && a.element_size == b.element_size && a.type_tag == b.type_tag &&
         a.dims == b.dims && a.shape == b.shape && a.sparse == b.sparse && a.partition == b.partition &&
         a.explicit_bounds == b.explicit_bounds && a.ranks == b.ranks && a.nnz == b.nnz;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings in(data, size);
  const bool seal = in.byte() & 1;
  const auto checksum = [](std::string_view t) {
    return fmt::format("{:016x}", detail::checkpoint_checksum(t));
  };
  const std::string text = seal ? fuzz::seal_manifest(in.rest(), "manifest_xxh3=", checksum) : std::string(in.rest());
  CheckpointManifest m;
  try {
    m = detail::parse_manifest(text, kFile);
  } catch (const CheckpointError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find(kFile) != std::string_view::npos, "an error that names no file");
    return 0;
  }
  check_consistent(m);
  const std::string again = detail::format_manifest(m);
  const CheckpointManifest back = detail::parse_manifest(again, kFile);
  FUZZ_CHECK(same(m, back), "format_manifest does not parse back to the same manifest");
  FUZZ_CHECK(detail::format_manifest(back) == again, "format_manifest is not stable");
  return 0;
}
