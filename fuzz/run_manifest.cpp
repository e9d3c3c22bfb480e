// The run-checkpoint manifest (recovery::parse_run_manifest, format_run_manifest), both
// ways; the first byte picks the way.
//   Reading: the input as it is or sealed (manifest_seal.hpp). A manifest is rejected
//     only with CheckpointError naming the file; an accepted one has ranks, threads and
//     call at least 1 and a journal per rank, and formats to a text that parses back
//     to the same manifest and formats to the same text again.
//   Writing: a manifest such as a run writes is built from the input, formatted and
//     parsed back; it must come back the same. Its program is any file name (no '/',
//     NUL or newline), its site "path:line" with any path (no NUL or newline), its
//     arrays' tags what checkpoint_type_tag gives (letters, digits, '_', '[', ']') and
//     their names anything without a newline, their ids of 19 digits at most (as
//     directory names are read); its nested manifests array-<id> and state-<id>; its bound settings what bind_checkpoints accepts (a name of one word
//     and a value, maybe empty, without control characters).
#include <fuzzer/FuzzedDataProvider.h>

#include <span>
#include <string>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "manifest_seal.hpp"
#include "recovery/run_checkpoint.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint_format.hpp"

namespace {

using strata::recovery::BoundSetting;
using strata::recovery::NestedManifest;
using strata::recovery::RunManifest;
using strata::recovery::SavedArray;

constexpr const char* kFile = "run/manifest.txt";

bool same(const RunManifest& a, const RunManifest& b) {
  bool arrays = a.arrays.size() == b.arrays.size(), journals = a.journals.size() == b.journals.size();
  for (std::size_t k = 0; arrays && k < a.arrays.size(); ++k) {
    const SavedArray &x = a.arrays[k], &y = b.arrays[k];
    arrays = x.id == y.id && x.tag == y.tag && x.shape == y.shape && x.owner_state == y.owner_state &&
             x.rounds == y.rounds && x.name == y.name;
  }
  for (std::size_t k = 0; journals && k < a.journals.size(); ++k)
    journals = a.journals[k].bytes == b.journals[k].bytes && a.journals[k].checksum == b.journals[k].checksum;
  bool nested = a.nested.size() == b.nested.size(), settings = a.settings.size() == b.settings.size();
  for (std::size_t k = 0; nested && k < a.nested.size(); ++k)
    nested = a.nested[k].dir == b.nested[k].dir && a.nested[k].checksum == b.nested[k].checksum;
  for (std::size_t k = 0; settings && k < a.settings.size(); ++k)
    settings = a.settings[k].name == b.settings[k].name && a.settings[k].value == b.settings[k].value;
  return arrays && journals && nested && settings && a.version == b.version && a.program == b.program && a.ranks == b.ranks &&
         a.threads == b.threads && a.seed == b.seed && a.call == b.call && a.changing_calls == b.changing_calls &&
         a.site == b.site;
}

// A string of bytes from the input, without the excluded ones (replaced by 'x').
std::string text(FuzzedDataProvider& in, std::size_t max, std::string_view excluded) {
  std::string s = in.ConsumeRandomLengthString(max);
  for (char& c : s)
    if (excluded.find(c) != std::string_view::npos) c = 'x';
  return s;
}

// As text(), without control characters (and without spaces when `spaces` is false).
std::string printable_text(FuzzedDataProvider& in, std::size_t max, bool spaces) {
  std::string s = in.ConsumeRandomLengthString(max);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F || (!spaces && c == ' ')) c = 'x';
  return s;
}

std::string tag(FuzzedDataProvider& in) {
  static constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_[]";
  std::string s(in.ConsumeIntegralInRange<std::size_t>(1, 12), 'f');
  for (char& c : s) c = kChars[in.ConsumeIntegralInRange<std::size_t>(0, kChars.size() - 1)];
  return s;
}

RunManifest generate(FuzzedDataProvider& in) {
  using std::string_view_literals::operator""sv;
  RunManifest m;
  m.program = text(in, 40, "/\0\n"sv);
  if (m.program.empty()) m.program = "strata";
  m.ranks = in.ConsumeIntegralInRange(1, 64);
  m.threads = in.ConsumeIntegralInRange(1, 1024);
  m.seed = in.ConsumeIntegral<std::uint64_t>();
  m.call = in.ConsumeIntegralInRange<std::int64_t>(1, INT64_MAX);
  m.changing_calls = in.ConsumeIntegralInRange<std::int64_t>(0, m.call);
  m.site = fmt::format("{}:{}", text(in, 60, "\0\n"sv), in.ConsumeIntegral<std::uint32_t>());
  for (int k = in.ConsumeIntegralInRange(0, 4); k > 0; --k) {
    SavedArray a;
    a.id = in.ConsumeIntegralInRange<std::uint64_t>(0, 9'999'999'999'999'999'999u);  // ids of 19 digits at most
    a.tag = tag(in);
    for (int d = in.ConsumeIntegralInRange(1, 4); d > 0; --d)
      a.shape.push_back(in.ConsumeIntegralInRange<std::int64_t>(0, INT64_MAX));
    a.owner_state = in.ConsumeBool();
    a.rounds = in.ConsumeIntegralInRange<std::int64_t>(0, INT64_MAX);
    a.name = text(in, 30, "\n"sv);
    m.arrays.push_back(a);
    const char* dir = a.owner_state ? "state" : "array";
    m.nested.push_back({fmt::format("{}-{}", dir, a.id), in.ConsumeIntegral<std::uint64_t>()});
  }
  for (int k = in.ConsumeIntegralInRange(0, 4); k > 0; --k) {
    BoundSetting b{printable_text(in, 12, false), printable_text(in, 30, true)};
    if (b.name.empty()) b.name = "--lr";
    m.settings.push_back(b);
  }
  for (int r = 0; r < m.ranks; ++r)
    m.journals.push_back({in.ConsumeIntegral<std::uint64_t>(), in.ConsumeIntegral<std::uint64_t>()});
  return m;
}

std::string checksum(std::string_view t) {
  return fmt::format("{:016x}", strata::detail::checkpoint_checksum(t));
}

void read(std::string_view input, bool seal) {
  using namespace strata;
  const std::string text = seal ? fuzz::seal_manifest(input, "checksum ", checksum) : std::string(input);
  RunManifest m;
  try {
    m = recovery::parse_run_manifest(text, kFile);
  } catch (const CheckpointError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find(kFile) != std::string_view::npos, "an error that names no file");
    return;
  }
  FUZZ_CHECK(m.ranks >= 1 && m.threads >= 1 && m.call >= 1, "ranks, threads or call below 1");
  FUZZ_CHECK(m.journals.size() == static_cast<std::size_t>(m.ranks), "a journal per rank");
  const std::string again = recovery::format_run_manifest(m);
  const RunManifest back = recovery::parse_run_manifest(again, kFile);
  FUZZ_CHECK(same(m, back), "format_run_manifest does not parse back to the same manifest");
  FUZZ_CHECK(recovery::format_run_manifest(back) == again, "format_run_manifest is not stable");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  fuzz::Settings settings(data, size);
  const std::uint8_t way = settings.byte();
  if ((way & 3) != 3) {
    read(settings.rest(), way & 1);
    return 0;
  }
  FuzzedDataProvider in(data + 1, size - 1);
  const RunManifest m = generate(in);
  const std::string text = recovery::format_run_manifest(m);
  RunManifest back;
  try {
    back = recovery::parse_run_manifest(text, kFile);
  } catch (const CheckpointError& e) {
    FUZZ_CHECK(false, std::string("a manifest as a run writes it is rejected: ") + e.what() + "\n" + text);
  }
  FUZZ_CHECK(same(m, back), "a manifest as a run writes it parses back differently:\n" + text);
  return 0;
}
