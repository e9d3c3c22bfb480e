// Deltas to their owners: the one path both a Buffer's flush (after a loop) and a
// relaxed table's clocks take. A rank's pending sets are drained, summed per element
// (threads in order: the same bits on every run), and packed as (key, delta) records,
// one message per owning rank; at the owner the records are located in the rank's
// storage and applied in runs through the element type's operations.
#include <algorithm>
#include <cstring>

#include "ps/ps_internal.hpp"

namespace strata::ps {
namespace {

constexpr std::size_t kRun = 512;  // elements located per call of the apply

// Packs drained runs into per-owner messages.
class Packer final : public DeltaSink {
 public:
  Packer(const ElementOps& ops, const Geometry& g, std::vector<Bytes>& out) : ops_(ops), g_(g), out_(out) {}
  void take(const DeltaRun& run) override {
    const std::size_t record = ops_.record_size, elem = ops_.element_size;
    for (std::size_t j = 0; j < run.n; ++j) {
      Bytes& b = out_[static_cast<std::size_t>(memo_.owner_of(g_, run.keys[j]))];
      const std::size_t at = b.size();
      b.resize(at + record);
      std::memcpy(b.data() + at, &run.keys[j], sizeof(std::int64_t));
      std::memcpy(b.data() + at + sizeof(std::int64_t), run.deltas + j * elem, elem);
    }
  }

 private:
  const ElementOps& ops_;
  const Geometry& g_;
  std::vector<Bytes>& out_;
  RowMemo memo_;
};

// Locates drained runs at this rank, the owner of every element in them.
class Locator final : public DeltaSink {
 public:
  Locator(const ElementOps& ops, const Geometry& g, const std::function<void(const OwnedRun&)>& f)
      : ops_(ops), g_(g), f_(f) {}
  void take(const DeltaRun& run) override {
    std::int64_t offsets[kRun];
    for (std::size_t at = 0; at < run.n; at += kRun) {
      const std::size_t n = std::min(kRun, run.n - at);
      for (std::size_t j = 0; j < n; ++j) {
        offsets[j] = memo_.local_offset_of(g_, run.keys[at + j]);
        STRATA_CHECK(offsets[j] >= 0, "a buffered delta reached a rank that does not own its element");
      }
      f_(OwnedRun{run.keys + at, offsets, run.deltas + at * ops_.element_size, ops_.element_size, n});
    }
  }

 private:
  const ElementOps& ops_;
  const Geometry& g_;
  const std::function<void(const OwnedRun&)>& f_;
  RowMemo memo_;
};

}  // namespace

std::vector<Bytes> pack_for_owners(ElementOps& ops, const Geometry& g, int ranks, std::span<const std::byte> prefix,
                                   std::size_t from, std::size_t count) {
  std::vector<Bytes> out(static_cast<std::size_t>(ranks));
  for (auto& b : out) b.assign(prefix.begin(), prefix.end());
  Packer packer(ops, g, out);
  ops.drain(from, count == 0 ? ops.set_count() : count, 0, 1, packer);
  return out;
}

void for_record_runs(const ElementOps& ops, const Geometry& g, std::span<const std::byte> records,
                     const std::function<void(const OwnedRun&)>& f) {
  const std::size_t record = ops.record_size, n_all = records.size() / record;
  std::int64_t keys[kRun], offsets[kRun];
  RowMemo memo;
  for (std::size_t at = 0; at < n_all; at += kRun) {
    const std::size_t n = std::min(kRun, n_all - at);
    const std::byte* base = records.data() + at * record;
    for (std::size_t j = 0; j < n; ++j) {
      std::memcpy(&keys[j], base + j * record, sizeof(std::int64_t));
      offsets[j] = memo.local_offset_of(g, keys[j]);
      STRATA_CHECK(offsets[j] >= 0, "a buffered delta reached a rank that does not own its element");
    }
    f(OwnedRun{keys, offsets, base + sizeof(std::int64_t), record, n});
  }
}

void for_drained_runs(ElementOps& ops, const Geometry& g, std::size_t from, std::size_t count, int part, int parts,
                      const std::function<void(const OwnedRun&)>& f) {
  Locator locator(ops, g, f);
  ops.drain(from, count == 0 ? ops.set_count() : count, part, parts, locator);
}

}  // namespace strata::ps
