// A rank's journal in a run checkpoint (recovery::decode_journal, encode_journal),
// both ways; the first byte picks the way.
//   Reading: any bytes are decoded. They are rejected only with CheckpointError naming
//     the file, and never make the decoder allocate more than the bytes could hold
//     (libFuzzer's -malloc_limit_mb reports a larger allocation); accepted ones encode
//     back to exactly the same bytes.
//   Writing: records built from the input (sites, accumulator states of any bytes)
//     are encoded and decoded back; they must come back the same.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "recovery/run_checkpoint.hpp"
#include "strata/error.hpp"

namespace {

using strata::recovery::CallRecord;

constexpr const char* kFile = "run/journal-0.bin";

bool same(const std::vector<CallRecord>& a, const std::vector<CallRecord>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].site != b[k].site || a[k].states != b[k].states) return false;
  return true;
}

std::vector<CallRecord> generate(FuzzedDataProvider& in) {
  std::vector<CallRecord> records(in.ConsumeIntegralInRange<std::size_t>(0, 8));
  for (auto& r : records) {
    r.site = in.ConsumeRandomLengthString(40);
    r.states.resize(in.ConsumeIntegralInRange<std::size_t>(0, 4));
    for (auto& s : r.states) {
      const std::vector<std::uint8_t> b = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange(0, 64));
      for (auto x : b) s.push_back(static_cast<std::byte>(x));
    }
  }
  return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace strata;
  if (size == 0) return 0;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 1) {
    FuzzedDataProvider in(data + 1, size - 1);
    const std::vector<CallRecord> records = generate(in);
    const Bytes encoded = recovery::encode_journal(records);
    FUZZ_CHECK(same(recovery::decode_journal(encoded, kFile), records), "a journal decodes to other records");
    return 0;
  }
  std::vector<CallRecord> records;
  try {
    records = recovery::decode_journal(bytes, kFile);
  } catch (const CheckpointError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find(kFile) != std::string_view::npos, "an error that names no file");
    return 0;
  }
  const Bytes again = recovery::encode_journal(records);
  FUZZ_CHECK(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()),
             "an accepted journal does not encode back to its bytes");
  return 0;
}
