// The narrow waist between loop bodies and the loop engine.
//
// parallel_for and sync_for are templates only as far as this file: they describe
// the iteration space as bytes (SpaceView) and turn the body into a LoopBody, a
// handle of two functions instantiated per body with the body inlined in them:
// - run: the body over a block of packed work records (index and element, or index
//   and element pointer), the executor's hot loop, so the per-iteration call stays
//   direct and inlined and only a block is dispatched through a pointer;
// - visit: the body at one iteration, for reconnaissance, replay and sync_for.
// Everything else (plans, analysis, layout, schedules, executors, recording and
// replay, the loop-call protocol) is compiled once in src/loop/ and works on bytes
// and element sizes (as Gloo's allreduce.h does with a void* reduction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/index.hpp"

namespace strata::loop::detail {

/// A DistArray seen as an iteration space: its identity and local storage as bytes.
/// Pointers stay valid while the array keeps its structure.
struct SpaceView {
  strata::detail::ArrayBase* array = nullptr;
  Runtime* rt = nullptr;
  int dims = 0;
  std::size_t elem_size = 0;
  bool sparse = false;
  std::int64_t nnz = 0;        ///< all ranks
  std::int64_t local_nnz = 0;  ///< this rank
  std::vector<std::int64_t> shape;
  strata::detail::KeyColumn keys;                  ///< sparse: local_nnz keys of dims subscripts, sorted
  const std::vector<IndexSet>* box = nullptr;      ///< dense: this rank's box
  std::byte* values = nullptr;                     ///< local elements (box or key order)
  /// The view of the same array as it is now: planning may repartition the space,
  /// which moves its storage, so the engine takes a fresh view after such steps.
  SpaceView (*refresh)(strata::detail::ArrayBase& array) = nullptr;
  SpaceView refreshed() const { return refresh(*array); }
};

/// Called around each iteration of a run that needs it (checked or verifying runs,
/// managed communication); plain runs have none and call nothing per iteration.
class IterationHook {
 public:
  virtual void before(const std::int64_t* index) = 0;
  virtual void after() = 0;

 protected:
  ~IterationHook() = default;
};

/// A loop body behind the waist.
struct LoopBody {
  /// The body over records [from, to) of `records`, with `hook` around each (may be
  /// null); `base` is what narrow records' subscripts count from (ignored by others).
  using RunRecords = void (*)(void* body, std::byte* records, std::size_t from, std::size_t to,
                              const std::int64_t* base, IterationHook* hook);
  void* body = nullptr;
  /// The body takes its element by value or const reference: work records carry a
  /// copy of the element (streamed, cache-friendly); otherwise a pointer to it.
  bool reads_only = true;
  std::size_t record_size = 0;   ///< bytes of one work record
  std::size_t value_offset = 0;  ///< where the element (or its pointer) sits in a record
  RunRecords run = nullptr;
  /// The same over compact records, whose subscripts are 32-bit: for spaces whose
  /// every extent fits (half the bytes of mf's records, which a plan keeps for good).
  std::size_t compact_record_size = 0;
  std::size_t compact_value_offset = 0;
  RunRecords run_compact = nullptr;
  /// The same over narrow records, whose subscripts are 16-bit offsets from a base
  /// per list of records: for lists that span at most 2^16 indices in every
  /// dimension (a 2-D plan's blocks; half the bytes of mf's compact records).
  /// narrow_record_size is 0 where a narrow record would not be smaller than a
  /// compact one or would straddle cache lines (its size does not divide 64).
  std::size_t narrow_record_size = 0;
  std::size_t narrow_value_offset = 0;
  RunRecords run_narrow = nullptr;
  /// The body at one iteration: `index` holds dims subscripts, `value` the element.
  void (*visit)(void* body, const std::int64_t* index, std::byte* value) = nullptr;
};

/// The space view of `space` (through which the engine may change its elements).
template <class Elem, std::size_t M>
SpaceView space_view(const DistArray<Elem, M>& array) {
  auto& space = const_cast<DistArray<Elem, M>&>(array);
  SpaceView v;
  v.array = &space;
  v.rt = &space.runtime();
  v.dims = static_cast<int>(M);
  v.elem_size = sizeof(Elem);
  v.sparse = space.is_sparse();
  v.nnz = space.nnz();
  v.local_nnz = space.local_nnz();
  v.shape.assign(space.shape().begin(), space.shape().end());
  v.keys = space.local_keys().column();
  v.box = &space.local_box();
  v.values = reinterpret_cast<std::byte*>(space.local_values().data());
  v.refresh = [](strata::detail::ArrayBase& a) { return space_view(static_cast<DistArray<Elem, M>&>(a)); };
  return v;
}

/// Whether `Body` may change the element it is given (it does not accept a const one).
template <class Body, class Elem, std::size_t M>
inline constexpr bool writes_elements = !std::is_invocable_v<Body&, const Index<M>&, const Elem&>;

/// The body over work records [from, to): each record's subscripts (64 or 32 bits, or
/// 16-bit offsets from `base`) and its element (a copy, or a pointer to it), with
/// `hook` around each iteration.
template <class Elem, std::size_t M, bool kReadsOnly, class Body, class Record>
void run_records(Body& f, Record* rec, std::size_t from, std::size_t to, const std::int64_t* base,
                 IterationHook* hook) {
  constexpr bool kNarrow = std::is_same_v<std::remove_cvref_t<decltype(rec->index[0])>, std::uint16_t>;
  auto element = [](Record& r) -> decltype(auto) {
    if constexpr (kReadsOnly) return static_cast<const Elem&>(r.value);
    else return *static_cast<Elem*>(r.value);
  };
  auto index = [base](const Record& r) -> decltype(auto) {
    if constexpr (std::is_same_v<decltype(Record::index), Index<M>>) {
      return (r.index);
    } else {
      Index<M> i;
      for (std::size_t d = 0; d < M; ++d) i[d] = r.index[d];
      if constexpr (kNarrow)
        for (std::size_t d = 0; d < M; ++d) i[d] += base[d];
      return i;
    }
  };
  if (!hook) {
    for (std::size_t k = from; k < to; ++k) f(index(rec[k]), element(rec[k]));
    return;
  }
  for (std::size_t k = from; k < to; ++k) {
    const Index<M>& i = index(rec[k]);
    hook->before(i.data());
    f(i, element(rec[k]));
    hook->after();
  }
}

/// The handle of `body` over elements of type Elem and M-dimensional indices.
template <class Elem, std::size_t M, class Body>
LoopBody loop_body(Body& body) {
  constexpr bool kReadsOnly = !writes_elements<Body, Elem, M>;
  using Value = std::conditional_t<kReadsOnly, Elem, void*>;
  struct Record {
    Index<M> index;
    Value value;
  };
  // Sixteen-byte aligned: mf's 12-byte records straddled cache lines and its
  // passes ran 10-30 % slower than with the 24-byte wide ones; at 16 bytes, as fast.
  struct alignas(16) CompactRecord {
    std::int32_t index[M];
    Value value;
  };
  // Packed without padding, so that mf's narrow records are 8 bytes.
  struct NarrowRecord {
    std::uint16_t index[M];
    Value value;
  };
  constexpr bool kNarrowPays = sizeof(NarrowRecord) < sizeof(CompactRecord) && 64 % sizeof(NarrowRecord) == 0;
  LoopBody h;
  h.body = const_cast<void*>(static_cast<const void*>(&body));
  h.reads_only = kReadsOnly;
  h.record_size = sizeof(Record);
  h.value_offset = offsetof(Record, value);
  h.compact_record_size = sizeof(CompactRecord);
  h.compact_value_offset = offsetof(CompactRecord, value);
  h.run = [](void* b, std::byte* records, std::size_t from, std::size_t to, const std::int64_t* base,
             IterationHook* hook) {
    run_records<Elem, M, kReadsOnly>(*static_cast<Body*>(b), reinterpret_cast<Record*>(records), from, to, base,
                                     hook);
  };
  h.run_compact = [](void* b, std::byte* records, std::size_t from, std::size_t to, const std::int64_t* base,
                     IterationHook* hook) {
    run_records<Elem, M, kReadsOnly>(*static_cast<Body*>(b), reinterpret_cast<CompactRecord*>(records), from, to,
                                     base, hook);
  };
  if constexpr (kNarrowPays) {
    h.narrow_record_size = sizeof(NarrowRecord);
    h.narrow_value_offset = offsetof(NarrowRecord, value);
    h.run_narrow = [](void* b, std::byte* records, std::size_t from, std::size_t to, const std::int64_t* base,
                      IterationHook* hook) {
      run_records<Elem, M, kReadsOnly>(*static_cast<Body*>(b), reinterpret_cast<NarrowRecord*>(records), from, to,
                                       base, hook);
    };
  }
  h.visit = [](void* b, const std::int64_t* index, std::byte* value) {
    Index<M> i;
    std::memcpy(i.data(), index, sizeof i);
    (*static_cast<Body*>(b))(i, *reinterpret_cast<Elem*>(value));
  };
  return h;
}

}  // namespace strata::loop::detail
