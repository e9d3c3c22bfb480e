// Deltas to their owners: the one path both a Buffer's flush (after a loop) and a
// relaxed table's clocks take. A rank's pending sets are drained, summed per element
// (threads in order: the same bits on every run), and packed as (key, delta) records,
// one message per owning rank; at the owner the records are located in the rank's
// storage and applied in runs through the element type's operations. A relaxed
// matrix's clocks pack row runs instead (a key and a count per run of a row's
// elements): a 50-float row then travels in 216 bytes rather than 800.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "ps/ps_internal.hpp"

namespace strata::ps {
namespace {

constexpr std::size_t kRun = 512;  // elements located per call of the apply

// Packs drained runs of single elements (row_len 1; rows go to RowPacker) into
// per-owner messages.
class Packer final : public DeltaSink {
 public:
  Packer(const ElementOps& ops, const Geometry& g, std::vector<Bytes>& out) : ops_(ops), g_(g), out_(out) {}
  void take(const DeltaRun& run) override {
    const std::size_t record = ops_.record_size, elem = ops_.element_size;
    for (std::size_t j = 0; j < run.n; ++j) {
      Bytes& b = out_[static_cast<std::size_t>(g_.owner_of(run.keys[j]))];
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
};

// Packs drained runs into per-owner messages as row runs: a RowRun header, then the
// run's deltas at the element size, padded to 8 bytes. A run never crosses a row, so
// one key and one owner lookup serve a row's elements.
struct RowRun {
  std::int64_t first, count;
};

class RowPacker final : public DeltaSink {
 public:
  RowPacker(const ElementOps& ops, const Geometry& g, std::vector<Bytes>& out) : ops_(ops), g_(g), out_(out) {}
  ~RowPacker() { close(); }
  RowPacker(const RowPacker&) = delete;
  RowPacker& operator=(const RowPacker&) = delete;
  void take(const DeltaRun& run) override {
    const std::size_t elem = ops_.element_size;
    for (std::size_t j = 0; j < run.n;) {
      const std::int64_t k = run.keys[j];
      if (!buf_ || k != next_ || k % g_.row_len == 0) {
        close();
        open(k);
      }
      // The stretch of keys k, k + 1, ... that stays in k's row: one copy for all of
      // them (a 100-float row was a hundred resizes and copies of 4 bytes).
      std::size_t m = 1;
      while (j + m < run.n && run.keys[j + m] == k + static_cast<std::int64_t>(m) &&
             (k + static_cast<std::int64_t>(m)) % g_.row_len != 0)
        ++m;
      const std::size_t at = buf_->size();
      buf_->resize(at + m * elem);
      std::memcpy(buf_->data() + at, run.deltas + j * elem, m * elem);
      count_ += static_cast<std::int64_t>(m);
      next_ = k + static_cast<std::int64_t>(m);
      j += m;
    }
  }
  void close() {
    if (!buf_) return;
    std::memcpy(buf_->data() + header_at_ + offsetof(RowRun, count), &count_, sizeof count_);
    buf_->resize((buf_->size() + 7) / 8 * 8, std::byte{0});
    buf_ = nullptr;
  }

 private:
  void open(std::int64_t k) {
    buf_ = &out_[static_cast<std::size_t>(memo_.owner_of(g_, k))];
    header_at_ = buf_->size();
    const RowRun h{k, 0};
    buf_->resize(header_at_ + sizeof h);
    std::memcpy(buf_->data() + header_at_, &h, sizeof h);
    count_ = 0;
  }

  const ElementOps& ops_;
  const Geometry& g_;
  std::vector<Bytes>& out_;
  RowMemo memo_;
  Bytes* buf_ = nullptr;  // the open run's message
  std::size_t header_at_ = 0;
  std::int64_t count_ = 0, next_ = 0;
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

std::vector<Bytes> pack_rows_for_owners(ElementOps& ops, const Geometry& g, int ranks,
                                        std::span<const std::byte> prefix) {
  std::vector<Bytes> out(static_cast<std::size_t>(ranks));
  for (auto& b : out) b.assign(prefix.begin(), prefix.end());
  {
    RowPacker packer(ops, g, out);
    ops.drain(0, ops.set_count(), 0, 1, packer);
  }  // closes the last run
  return out;
}

void for_row_runs(const ElementOps& ops, const Geometry& g, std::span<const std::byte> runs,
                  const std::function<void(const OwnedRun&)>& f) {
  const std::size_t elem = ops.element_size;
  std::int64_t keys[kRun], offsets[kRun];
  RowMemo memo;
  for (std::size_t at = 0; at < runs.size();) {
    RowRun h;
    std::memcpy(&h, runs.data() + at, sizeof h);
    at += sizeof h;
    const std::int64_t base = memo.local_offset_of(g, h.first);
    STRATA_CHECK(base >= 0, "a buffered delta reached a rank that does not own its element");
    for (std::int64_t done = 0; done < h.count; done += static_cast<std::int64_t>(kRun)) {
      const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(kRun), h.count - done));
      for (std::size_t j = 0; j < n; ++j) {
        keys[j] = h.first + done + static_cast<std::int64_t>(j);
        offsets[j] = base + done + static_cast<std::int64_t>(j);
      }
      f(OwnedRun{keys, offsets, runs.data() + at + static_cast<std::size_t>(done) * elem, elem, n});
    }
    at += (static_cast<std::size_t>(h.count) * elem + 7) / 8 * 8;
  }
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
