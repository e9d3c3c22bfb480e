// Sparse data movement on bytes: routing entries to the ranks that own their
// indices, and sorting what arrives into a sparse array's keys and values.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "strata/detail/free_now.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/detail/collective_error.hpp"
#include "array/radix_sort.hpp"
#include "strata/error.hpp"
#include "strata/index.hpp"

namespace strata::detail {

namespace {

constexpr int kMaxDims = 4;

// The subscripts of record k (they lie at its start).
std::array<std::int64_t, kMaxDims> index_of(const std::byte* record, int dims) {
  std::array<std::int64_t, kMaxDims> i{};
  std::memcpy(i.data(), record, static_cast<std::size_t>(dims) * sizeof(std::int64_t));
  return i;
}

std::uint64_t linear_of(const std::array<std::int64_t, kMaxDims>& i, const std::vector<std::int64_t>& shape) {
  std::uint64_t k = 0;
  for (std::size_t d = 0; d < shape.size(); ++d)
    k = k * static_cast<std::uint64_t>(shape[d]) + static_cast<std::uint64_t>(i[d]);
  return k;
}

std::array<std::int64_t, kMaxDims> index_of_linear(std::uint64_t k, const std::vector<std::int64_t>& shape) {
  std::array<std::int64_t, kMaxDims> i{};
  for (std::size_t d = shape.size(); d-- > 1;) {
    i[d] = static_cast<std::int64_t>(k % static_cast<std::uint64_t>(shape[d]));
    k /= static_cast<std::uint64_t>(shape[d]);
  }
  i[0] = static_cast<std::int64_t>(k);
  return i;
}

// Merges the value at `from` into the stored value at `to`, for a repeated index.
void merge_duplicate(std::byte* to, const std::byte* from, std::size_t size, Duplicates dup, AddValue add,
                     std::span<const std::int64_t> index) {
  switch (dup) {
    case Duplicates::error:
      throw ShapeError(fmt::format("index {} appears more than once", index_label(index)));
    case Duplicates::sum:
      if (!add) throw ShapeError("Duplicates::sum needs an element type with +=");
      add(to, from);
      return;
    case Duplicates::first:
      return;
    case Duplicates::last:
      std::memcpy(to, from, size);
      return;
  }
}

// Records sorted by their row-major position with a radix sort, each key travelling
// with its value (a sort of positions followed by a gather is bound by cache misses).
// S is the value's size; a value is moved as S bytes. Key is the position's type: 32
// bits where the shape's volume allows, which makes mf's sort records 8 bytes instead
// of 16 (they are made while the routed entries, 24 bytes each, are still held: the
// loader's peak memory).
template <std::size_t S, class Key>
void absorb_by_linear_key(ThreadPool* pool, const std::vector<std::int64_t>& shape, const RecordLayout& layout,
                          std::span<const std::byte> records, Duplicates dup, AddValue add,
                          const std::function<void()>& release_input, const SparseOutput& output) {
  using Value = std::array<std::byte, S>;
  const std::size_t n = records.size() / layout.record_size;
  const int dims = layout.dims;
  // The loops over every record run on the pool's threads, each over its own range.
  auto over_ranges = [&](const std::function<void(std::size_t, std::size_t)>& f) {
    if (!pool || pool->size() == 1 || n < (std::size_t{1} << 16)) return f(0, n);
    pool->run_ranges(static_cast<std::int64_t>(n), [&](std::int64_t lo, std::int64_t hi, int) {
      f(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi));
    });
  };
  // Not value-initialised (its pages are touched as they are written), and the
  // records' pages are handed back as they are converted: the records and the sort's
  // items are not both held whole.
  using Item = KeyedValue<Value, Key>;
  const std::unique_ptr<Item[]> item_storage(new Item[n]);
  const std::span<Item> items(item_storage.get(), n);
  const std::size_t slice = std::max<std::size_t>(1, (std::size_t{8} << 20) / layout.record_size);
  over_ranges([&](std::size_t lo, std::size_t hi) {
    for (std::size_t from = lo; from < hi; from += slice) {
      const std::size_t to = std::min(hi, from + slice);
      for (std::size_t k = from; k < to; ++k) {
        const std::byte* record = records.data() + k * layout.record_size;
        items[k].key = static_cast<Key>(linear_of(index_of(record, dims), shape));
        std::memcpy(items[k].value.data(), record + layout.value_offset, S);
      }
      drop_pages(records.data() + from * layout.record_size, (to - from) * layout.record_size);
    }
  });
  release_input();
  radix_sort(items, pool);
  std::size_t distinct = n > 0 ? 1 : 0;
  for (std::size_t k = 1; k < n; ++k) distinct += items[k].key != items[k - 1].key;
  auto [keys, values] = output(distinct);
  const int width = key_width_for(shape);
  const std::size_t key_bytes = static_cast<std::size_t>(dims) * static_cast<std::size_t>(width);
  auto write_key = [&](std::uint64_t linear, std::size_t at) {
    store_key(keys + at * key_bytes, index_of_linear(linear, shape).data(), dims, width);
  };
  if (distinct == n) {  // no repeated index: record k is element k
    over_ranges([&](std::size_t lo, std::size_t hi) {
      for (std::size_t k = lo; k < hi; ++k) {
        write_key(items[k].key, k);
        std::memcpy(values + k * S, items[k].value.data(), S);
      }
    });
    return;
  }
  std::size_t stored = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && items[k].key == items[k - 1].key) {
      const auto index = index_of_linear(items[k].key, shape);
      merge_duplicate(values + (stored - 1) * S, items[k].value.data(), S, dup, add,
                      std::span<const std::int64_t>(index.data(), static_cast<std::size_t>(dims)));
      continue;
    }
    write_key(items[k].key, stored);
    std::memcpy(values + stored * S, items[k].value.data(), S);
    ++stored;
  }
}

// Any value size and any shape (also volumes past 2^63): a stable sort of record
// positions by their subscripts, then a gather.
void absorb_by_subscripts(const std::vector<std::int64_t>& shape, const RecordLayout& layout,
                          std::span<const std::byte> records, Duplicates dup, AddValue add,
                          const std::function<void()>& release_input, const SparseOutput& output) {
  const std::size_t n = records.size() / layout.record_size;
  const int dims = layout.dims;
  const auto record = [&](std::size_t k) { return records.data() + k * layout.record_size; };
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return index_of(record(a), dims) < index_of(record(b), dims); });
  std::size_t distinct = n > 0 ? 1 : 0;
  for (std::size_t k = 1; k < n; ++k)
    distinct += index_of(record(order[k]), dims) != index_of(record(order[k - 1]), dims);
  auto [keys, values] = output(distinct);
  const int width = key_width_for(shape);
  const std::size_t key_bytes = static_cast<std::size_t>(dims) * static_cast<std::size_t>(width);
  const std::size_t size = layout.value_size;
  std::size_t stored = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::byte* r = record(order[k]);
    if (k > 0 && index_of(r, dims) == index_of(record(order[k - 1]), dims)) {
      const auto index = index_of(r, dims);
      merge_duplicate(values + (stored - 1) * size, r + layout.value_offset, size, dup, add,
                      std::span<const std::int64_t>(index.data(), static_cast<std::size_t>(dims)));
      continue;
    }
    store_key(keys + stored * key_bytes, index_of(r, dims).data(), dims, width);
    std::memcpy(values + stored * size, r + layout.value_offset, size);
    ++stored;
  }
  release_input();
}

}  // namespace

std::string index_label(std::span<const std::int64_t> index) {
  return fmt::format("({})", fmt::join(index, ", "));
}

void route_records(Comm& comm, const Distribution& dist, const RecordLayout& layout,
                   std::span<const std::byte> records, const std::function<void()>& release_input,
                   const std::function<void(std::size_t count)>& reserve,
                   const std::function<void(std::span<const std::byte>)>& append, std::size_t round_bytes) {
  const int ranks = comm.size();
  const std::size_t size = layout.record_size;
  const std::size_t n = records.size() / size;
  // Every rank takes part in as many rounds as the rank with the most records needs.
  const std::size_t per_round = std::max<std::size_t>(1, round_bytes / size);
  const std::int64_t rounds = std::max<std::int64_t>(
      1, comm.allreduce(static_cast<std::int64_t>((n + per_round - 1) / per_round), ReduceOp::max));
  std::vector<std::vector<Bytes>> received(static_cast<std::size_t>(rounds));
  std::vector<int> owner;
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::size_t lo = std::min(n, static_cast<std::size_t>(round) * per_round), hi = std::min(n, lo + per_round);
    owner.resize(hi - lo);
    std::vector<std::size_t> counts(static_cast<std::size_t>(ranks), 0);
    for (std::size_t k = lo; k < hi; ++k) {
      owner[k - lo] = dist.owner(index_of(records.data() + k * size, layout.dims).data());
      ++counts[static_cast<std::size_t>(owner[k - lo])];
    }
    std::vector<Bytes> send(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) send[static_cast<std::size_t>(r)].reserve(counts[static_cast<std::size_t>(r)] * size);
    for (std::size_t k = lo; k < hi; ++k) {
      Bytes& out = send[static_cast<std::size_t>(owner[k - lo])];
      const std::byte* record = records.data() + k * size;
      out.insert(out.end(), record, record + size);
    }
    drop_pages(records.data() + lo * size, (hi - lo) * size);  // sent: handed back
    received[static_cast<std::size_t>(round)] = comm.alltoallv(send);
  }
  free_now(owner);
  release_input();
  std::size_t total = 0;
  for (const auto& parts : received)
    for (const Bytes& part : parts) total += part.size() / size;
  reserve(total);
  for (int source = 0; source < ranks; ++source)
    for (auto& parts : received) {
      Bytes& part = parts[static_cast<std::size_t>(source)];
      if (!part.empty()) append(part);
      free_now(part);
    }
}

std::int64_t absorb_records(Comm& comm, ThreadPool* pool, const std::vector<std::int64_t>& shape,
                            const RecordLayout& layout, std::span<const std::byte> records, Duplicates dup,
                            AddValue add, const std::function<void()>& release_input, const SparseOutput& output) {
  std::int64_t stored = 0;
  const SparseOutput counted = [&](std::size_t count) {
    stored = static_cast<std::int64_t>(count);
    return output(count);
  };
  // A duplicate found on one rank must stop every rank, not leave them waiting.
  all_or_none(comm, [&] {
    long double volume = 1;
    for (const auto e : shape) volume *= static_cast<long double>(std::max<std::int64_t>(e, 1));
    if (volume >= 0x1p63L) return absorb_by_subscripts(shape, layout, records, dup, add, release_input, counted);
    auto by_linear_key = [&]<class Key>(Key) {
      switch (layout.value_size) {
        case 1: return absorb_by_linear_key<1, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        case 2: return absorb_by_linear_key<2, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        case 4: return absorb_by_linear_key<4, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        case 8: return absorb_by_linear_key<8, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        case 12: return absorb_by_linear_key<12, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        case 16: return absorb_by_linear_key<16, Key>(pool, shape, layout, records, dup, add, release_input, counted);
        default: return absorb_by_subscripts(shape, layout, records, dup, add, release_input, counted);
      }
    };
    if (volume <= 0x1p32L) return by_linear_key(std::uint32_t{});
    return by_linear_key(std::uint64_t{});
  });
  return comm.allreduce(stored, ReduceOp::sum);
}

void check_records_in_bounds(Comm& comm, const std::vector<std::int64_t>& shape, const RecordLayout& layout,
                             std::span<const std::byte> records, const char* what) {
  all_or_none(comm, [&] {
    const std::size_t n = records.size() / layout.record_size;
    const auto dims = static_cast<std::size_t>(layout.dims);
    for (std::size_t k = 0; k < n; ++k) {
      const auto i = index_of(records.data() + k * layout.record_size, layout.dims);
      for (std::size_t d = 0; d < dims; ++d)
        if (i[d] < 0 || i[d] >= shape[d])
          throw ShapeError(fmt::format("{}: index {} is outside shape {}", what,
                                       index_label(std::span<const std::int64_t>(i.data(), dims)),
                                       index_label(shape)));
    }
  });
}

}  // namespace strata::detail
